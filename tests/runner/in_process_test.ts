/**
 * The in-process runner: the same Outcome as `runBlock` for the same block, its timeout says
 * `timed_out`, and a signal says `cancelled`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { InProcessRunner } from "../../src/runner/in_process.ts";
import { runBlock } from "../../src/runtime/run.ts";
import type { RunRequest } from "../../src/runner/runner.ts";
import { testEnv } from "../helpers.ts";

const quiet = { stdout: () => {}, stderr: () => {} };

Deno.test("in-process runner: the same outcome as runBlock, block for block", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_in_process_" });
  const blocks: Record<string, string> = {
    "ret.lua":
      'io.stderr:write("error: fake\\n")\nreturn "v " .. _PROMPT .. " " .. _CONTEXT .. " " .. std.env.get("AB_MARK")\n',
    "raise.lua": "error({ code = 5 })\n",
    "defer.lua": 'job.defer("later")\n',
    "exit.lua": "os.exit(3)\n",
    "nothing.lua": "local x = 1\n",
  };
  const runner = new InProcessRunner(quiet);
  for (const [name, src] of Object.entries(blocks)) {
    Deno.writeTextFileSync(join(dir, name), src);
    const env = testEnv({ AB_MARK: "marked" });
    const req: RunRequest = {
      script: { path: join(dir, name) },
      projectRoot: dir,
      env,
      prompt: "p",
      context: "c",
    };
    const viaRunner = (await runner.run(req)).outcome;
    const direct = await runBlock({ ...req, prompt: "p", context: "c", ...quiet });
    assert.deepEqual(viaRunner, direct, name);
  }
  const r = await runner.run({
    script: { path: join(dir, "ret.lua") },
    projectRoot: dir,
    env: testEnv({ AB_MARK: "m" }),
    prompt: "p",
    context: "c",
  });
  assert.deepEqual(r.outcome, { status: "returned", value: "v p c m" });
});

Deno.test("in-process runner: its timeout is timed_out, the request's signal cancelled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_in_process_" });
  Deno.writeTextFileSync(join(dir, "slow.lua"), 'std.task.sleep(300)\nreturn "woke"\n');
  const runner = new InProcessRunner(quiet);
  const req: RunRequest = { script: { path: join(dir, "slow.lua") }, projectRoot: dir, env: testEnv() };
  assert.deepEqual((await runner.run({ ...req, timeoutMs: 200 })).outcome, {
    status: "timed_out",
    seconds: 0.2,
  });
  const ac = new AbortController();
  let started = false;
  const running = runner.run({ ...req, signal: ac.signal }, { onStart: () => started = true });
  assert.ok(started);
  setTimeout(() => ac.abort("the embedder cancelled"), 100);
  assert.deepEqual((await running).outcome, { status: "cancelled", reason: "the embedder cancelled" });
});

Deno.test("in-process runner: typed stores and prompt files come from the request (no store variable), correlation reaches the run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_in_process_" });
  Deno.writeTextFileSync(join(dir, "prompt.md"), "from a file");
  Deno.writeTextFileSync(
    join(dir, "s.lua"),
    `std.kv.set("ns", "k", "v")
     return std.json.encode({ prompt = _PROMPT, kv_var = std.env.get("AGENT_BLOCK_KV_PATH") or "unset",
       run_id = std.env.get("AGENT_BLOCK_RUN_ID"), got = std.kv.get("ns", "k") })`,
  );
  const kv = join(dir, "typed_kv.sqlite");
  const seen: string[] = [];
  const r = await new InProcessRunner(quiet).run({
    script: { path: join(dir, "s.lua") },
    projectRoot: dir,
    env: testEnv(),
    prompt: { file: "prompt.md" },
    stores: { kv, kernel: ":memory:" },
    correlation: { runId: "run-7" },
  }, { observe: (e) => seen.push(e.type) });
  assert.equal(r.outcome.status, "returned");
  const v = JSON.parse((r.outcome as { value: string }).value);
  assert.deepEqual(v, { prompt: "from a file", kv_var: "unset", run_id: "run-7", got: "v" });
  assert.ok(Deno.statSync(kv).isFile, "the typed kv path is the store's file");
  assert.deepEqual(seen, ["end"]);
});

Deno.test("in-process runner: a sandboxed request or a missing prompt file never starts, with one end", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_in_process_" });
  Deno.writeTextFileSync(join(dir, "s.lua"), "return 1");
  const runner = new InProcessRunner(quiet);
  const ends: string[] = [];
  const observe = (e: { type: string }) => void ends.push(e.type);
  const base: RunRequest = { script: { path: join(dir, "s.lua") }, projectRoot: dir, env: testEnv() };
  const sandboxed = await runner.run({ ...base, sandbox: true }, { observe });
  assert.equal(sandboxed.outcome.status, "raised");
  if (sandboxed.outcome.status === "raised") {
    assert.equal(sandboxed.outcome.code, "config");
    assert.match(sandboxed.outcome.message, /needs a process of its own/);
  }
  const missing = await runner.run({ ...base, context: { file: "nope.md" } }, { observe });
  assert.equal(missing.outcome.status, "raised");
  if (missing.outcome.status === "raised") {
    assert.match(missing.outcome.message, /context file nope\.md: no such file/);
  }
  assert.deepEqual(ends, ["end", "end"]);
});
