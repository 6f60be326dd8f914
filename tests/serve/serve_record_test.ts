/**
 * The manager's record across starts (issue 16 §1): a manager SIGKILLed in the middle of a run
 * and restarted closes the run `lost`, keeps every earlier run, and leaves nothing of the run's
 * process tree alive; job files added, removed and malformed while the manager runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DAEMON_PID_FILES, lacksProcessTools, processAlive, waitFor, writeDaemonScript } from "../helpers.ts";
import { jobProject, startManager, waitForEnd, waitForRun } from "./serve_helpers.ts";

const skip = lacksProcessTools("setsid");
const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "serve: a manager SIGKILLed mid-run restarts with the run lost, the record intact, the tree gone",
  ...opts,
  ignore: skip !== undefined,
  fn: async () => {
    const p = await jobProject({
      "blocks/quick.lua": 'return "done"',
      "blocks/quick.job.toml": 'every = "1h"\n',
      "blocks/hang.lua": `sh.exec("sh '" .. _PROMPT .. "/daemons.sh' '" .. _PROMPT .. "'")
std.fs.write(_PROMPT .. "/started", "")
std.task.sleep(300)`,
    });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    writeDaemonScript(scratch);
    Deno.writeTextFileSync(join(p.root, "blocks/hang.job.toml"), `prompt = "${scratch}"\n`);
    const first = await startManager(p.root, p.home);
    let quick;
    let hangId: string;
    let pid: number;
    try {
      quick = await waitForEnd(first, "quick");
      const req = await first.api("/jobs/hang/runs", { method: "POST" });
      assert.equal(req.status, 202);
      hangId = req.body.run_id;
      const running = await waitForRun(first, hangId, "running");
      pid = running.pid;
      await waitFor(() => {
        try {
          return Deno.statSync(join(scratch, "started")).isFile;
        } catch {
          return false;
        }
      }, { what: "the hanging run to start its daemons", timeoutMs: 60_000 });
    } finally {
      await first.kill();
    }
    const daemons = DAEMON_PID_FILES.map((f) => Number(Deno.readTextFileSync(join(scratch, f)).trim()));

    const second = await startManager(p.root, p.home);
    try {
      const lost = await waitForRun(second, hangId, "lost");
      assert.equal(lost.exit_code, null);
      assert.match(lost.message, /manager stopped/);
      // The record continues: the first start's run is still there, unchanged.
      const again = (await second.api(`/runs/${quick.run_id}`)).body;
      assert.equal(again.state, "ok");
      assert.equal(again.result, "done");
      assert.ok(!processAlive(pid), `the run's leader ${pid} should be gone`);
      await waitFor(() => daemons.every((d) => !processAlive(d)), { what: "the lost run's daemons to end" });
      // Two sessions, one per start; the start was recorded by the first, the loss by the second.
      const db = new DatabaseSync(join(p.home, "serve.sqlite"), { readOnly: true });
      try {
        const rows = db.prepare(
          "SELECT stream, kind FROM events WHERE kind = 'session_open' OR json_extract(data, '$.run_id') = ? ORDER BY position",
        ).all(hangId) as { stream: string; kind: string }[];
        const sessions = rows.filter((r) => r.kind === "session_open").map((r) => r.stream);
        assert.equal(sessions.length, 2);
        assert.deepEqual(rows.filter((r) => r.kind !== "session_open").map((r) => [r.kind, r.stream]), [
          ["run_start", sessions[0]],
          ["run_end", sessions[1]],
        ]);
      } finally {
        db.close();
      }
      // `every` counts across starts: quick ran an hour's interval ago at most, so it is not due.
      const jobs = (await second.api("/jobs")).body.jobs;
      assert.equal(jobs.find((j: { name: string }) => j.name === "quick").last_end.run_id, quick.run_id);
    } finally {
      assert.equal(await second.stop(), 0);
    }
  },
});

Deno.test({
  name:
    "serve: a job file added is a job at the next tick, removed is none, malformed is reported and skipped",
  ...opts,
  fn: async () => {
    const p = await jobProject({ "blocks/late.lua": 'return "late"', "blocks/other.lua": "return 1" });
    const m = await startManager(p.root, p.home);
    try {
      assert.deepEqual((await m.api("/jobs")).body, { jobs: [] });
      Deno.writeTextFileSync(join(p.root, "blocks/late.job.toml"), 'timeout = "1m"\n');
      await waitFor(async () => (await m.api("/jobs")).body.jobs.length === 1, { what: "the new job" });
      const req = await m.api("/jobs/late/runs", { method: "POST" });
      assert.equal(req.status, 202);
      const run = await waitForRun(m, req.body.run_id, "ok");
      assert.equal(run.result, "late");
      assert.equal(run.requested, true);

      Deno.writeTextFileSync(join(p.root, "blocks/other.job.toml"), 'every = "1h"\nevery_other = "2h"\n');
      await waitFor(async () => (await m.api("/jobs")).body.jobs.length === 2, { what: "the malformed job" });
      const bad = (await m.api("/jobs")).body.jobs.find((j: { name: string }) => j.name === "other");
      assert.deepEqual(bad.error, {
        file: join(p.root, "blocks/other.job.toml"),
        line: 2,
        message:
          "unknown key 'every_other' (a job.toml has every, timeout, prompt, context, sandbox, flow, init, queue, max_attempts, project)",
      });
      const refused = await m.api("/jobs/other/runs", { method: "POST" });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error, "job_invalid");
      Deno.writeTextFileSync(join(p.root, "blocks/other.job.toml"), "every = [\n");
      await waitFor(async () => {
        const j = (await m.api("/jobs")).body.jobs.find((x: { name: string }) => x.name === "other");
        return /not valid TOML/.test(j?.error?.message ?? "");
      }, { what: "the syntax error reported" });
      assert.match(m.stderr(), /job other: .*other\.job\.toml:2: unknown key 'every_other'/);

      Deno.removeSync(join(p.root, "blocks/late.job.toml"));
      await waitFor(
        async () => !(await m.api("/jobs")).body.jobs.some((j: { name: string }) => j.name === "late"),
        {
          what: "the removed job to go",
        },
      );
      assert.equal((await m.api("/jobs/late/runs", { method: "POST" })).status, 404);
      // Its runs stay on the record.
      assert.equal((await m.api(`/runs/${run.run_id}`)).body.state, "ok");
      assert.equal((await m.api("/runs?job=late")).body.runs.length, 1);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name: "serve: DELETE /runs/<id> ends a live run at the next tick, stopped; SIGTERM stops the manager",
  ...opts,
  fn: async () => {
    const p = await jobProject({ "blocks/wait.lua": "std.task.sleep(300)", "blocks/wait.job.toml": "" });
    const m = await startManager(p.root, p.home);
    let id2 = "";
    try {
      const id = (await m.api("/jobs/wait/runs", { method: "POST" })).body.run_id;
      await waitForRun(m, id, "running");
      const del = await m.api(`/runs/${id}`, { method: "DELETE" });
      assert.deepEqual([del.status, del.body], [202, { run_id: id, stop_requested: true }]);
      const run = await waitForRun(m, id, "stopped");
      assert.equal(run.exit_code, 130);
      const again = await m.api(`/runs/${id}`, { method: "DELETE" });
      assert.deepEqual([again.status, again.body.error], [409, "run_not_live"]);
      // A run going when the manager is stopped ends `stopped` too.
      id2 = (await m.api("/jobs/wait/runs", { method: "POST" })).body.run_id;
      await waitForRun(m, id2, "running");
    } finally {
      assert.equal(await m.stop(), 0);
    }
    assert.match(m.stderr(), /received SIGTERM/);
    const next = await startManager(p.root, p.home);
    try {
      const run = (await next.api(`/runs/${id2}`)).body;
      assert.deepEqual([run.state, run.message], ["stopped", "the manager is stopping"]);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  },
});
