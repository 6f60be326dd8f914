/**
 * `agent-block --outcome FILE` end to end (real CLI subprocesses): the file is written for
 * every way a run ends — return, raise, `job.defer`, `os.exit(3)`, SIGTERM — and agrees with the
 * exit code; `--config` carries it too; a relative path is the run's working directory's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runCli, testEnv } from "../helpers.ts";
import { parseOutcomeJson } from "../../src/runner/outcome_json.ts";
import { exitCodeOf, type Outcome } from "../../src/outcome.ts";
import { waitForFile } from "../mcp_server/mcp_helpers.ts";

async function runWithOutcome(
  source: string,
  extra: string[] = [],
): Promise<{ code: number; outcome: Outcome; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "ab_outcome_" });
  Deno.writeTextFileSync(join(dir, "b.lua"), source);
  const out = join(dir, "outcome.json");
  const r = await runCli(["-s", join(dir, "b.lua"), "-p", dir, "--outcome", out, ...extra], {
    env: testEnv(),
  });
  const outcome = parseOutcomeJson(Deno.readTextFileSync(out), out);
  assert.equal(r.code, exitCodeOf(outcome), r.stderr);
  // Only the outcome file is left behind: the temporary file was renamed into place.
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["b.lua", "outcome.json"]);
  return { code: r.code, outcome, stderr: r.stderr };
}

Deno.test("--outcome: written on return, raise, job.defer and os.exit", async () => {
  // Eight independent runs (each its own directory), started at once.
  const [ret, raised, plain, deferred, exited, nothing, bytes, never] = await Promise.all([
    runWithOutcome('io.stderr:write("error: fake\\n")\nreturn "the value"\n'),
    runWithOutcome('error({ code = 7, why = "on purpose" })\n'),
    runWithOutcome('error("boom")\n'),
    runWithOutcome('job.defer("the database is down")\n'),
    runWithOutcome("os.exit(3)\n"),
    runWithOutcome("local x = 1\n"),
    runWithOutcome('return "\\255\\0"\n'),
    runWithOutcome("this is not Lua\n"),
  ]);
  assert.deepEqual(ret.outcome, { status: "returned", value: "the value" });
  assert.equal(ret.code, 0);

  assert.equal(raised.code, 1);
  assert.equal(raised.outcome.status, "raised");
  if (raised.outcome.status === "raised") {
    assert.deepEqual(raised.outcome.error, { code: 7, why: "on purpose" });
    assert.match(raised.outcome.traceback, /stack traceback/);
  }
  assert.equal(plain.outcome.status, "raised");
  if (plain.outcome.status === "raised") assert.match(plain.outcome.message, /b\.lua:1: boom$/);

  assert.deepEqual(deferred.outcome, { status: "deferred", reason: "the database is down" });
  assert.equal(deferred.code, 75);

  assert.deepEqual(exited.outcome, { status: "exited", code: 3 });

  assert.deepEqual(nothing.outcome, { status: "returned", value: undefined });

  assert.deepEqual(bytes.outcome, { status: "returned", value: new Uint8Array([0xff, 0]) });

  assert.equal(never.outcome.status, "raised");
});

Deno.test("--outcome: from --config, relative to the run's working directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_outcome_cfg_" });
  Deno.writeTextFileSync(join(dir, "b.lua"), "return _PROMPT\n");
  Deno.writeTextFileSync(join(dir, "run.json"), JSON.stringify({ prompt: "p", outcome: "out.json" }));
  const r = await runCli(["-s", "b.lua", "--config", "run.json"], { cwd: dir, env: testEnv() });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(parseOutcomeJson(Deno.readTextFileSync(join(dir, "out.json")), "out.json"), {
    status: "returned",
    value: "p",
  });
  Deno.writeTextFileSync(join(dir, "bad.json"), JSON.stringify({ outcome: 3 }));
  const bad = await runCli(["-s", "b.lua", "--config", "bad.json"], { cwd: dir, env: testEnv() });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /bad\.json: field 'outcome' must be a string, got number/);
});

Deno.test("--outcome: SIGTERM stops the run and the file says stopped", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_outcome_term_" });
  const started = join(dir, "started");
  Deno.writeTextFileSync(
    join(dir, "b.lua"),
    `local f = assert(io.open(${
      JSON.stringify(started)
    }, "w")) f:write("x") f:close()\nstd.task.sleep(300)\nreturn "woke"\n`,
  );
  const out = join(dir, "outcome.json");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", join(dir, "b.lua"), "-p", dir, "--outcome", out],
    env: testEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  await waitForFile(started, "the block to start");
  child.kill("SIGTERM");
  const status = await child.status;
  assert.equal(status.code, 130, await stderr);
  assert.deepEqual(parseOutcomeJson(Deno.readTextFileSync(out), out), {
    status: "cancelled",
    reason: "received SIGTERM",
  });
});
