/**
 * `agent-block serve` managers sharing one record (issue 26 §2): one manager per project (a
 * second is refused and touches nothing), managers of two projects on one home leave each other's
 * runs and interval jobs alone, a manager that cannot bind its port closes no run, runs get the
 * manager's credentials (and their own children do not), and a timeout past the host timer's
 * range holds. Real managers, real runs, real record; every wait is on a state or a file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, processAlive, tempDir, waitFor, writeTree } from "../helpers.ts";
import { jobProject, runManagerToExit, startManager, waitForEnd, waitForRun } from "./serve_helpers.ts";
import { DatabaseSync } from "node:sqlite";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A block that says it runs (a file under `_PROMPT`), then waits for `<_PROMPT>/go`. */
const WAITER = `std.fs.write(_PROMPT .. "/" .. _CONTEXT, "")
while not std.fs.exists(_PROMPT .. "/go") do std.task.sleep(0.05) end
return "went"`;

Deno.test({
  name:
    "attack: a second manager of one project is refused, naming the first, and its live run and interval job go on",
  ...opts,
  fn: async () => {
    const p = await jobProject({ "blocks/tick.lua": WAITER });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    writeTree(p.root, {
      "blocks/tick.job.toml": `every = "1h"\nprompt = "${scratch}"\ncontext = "started"\n`,
    });
    const first = await startManager(p.root, p.home);
    try {
      await waitFor(() => pathExists(join(scratch, "started")), {
        what: "the interval run to start",
        timeoutMs: 60_000,
      });
      const live = (await first.api("/runs?job=tick")).body.runs;
      assert.equal(live.length, 1);
      assert.equal(live[0].state, "running");

      const second = await runManagerToExit(p.root, p.home);
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `the manager with pid ${first.child.pid} already serves project .*one manager per project`,
        ),
      );
      // the refused manager closed nothing and started nothing
      const after = await first.api(`/runs/${live[0].run_id}`);
      assert.equal(after.body.state, "running");
      assert.ok(processAlive(after.body.pid), "the live run's process is untouched");
      Deno.writeTextFileSync(join(scratch, "go"), "");
      const ended = await waitForRun(first, live[0].run_id, "ok");
      assert.equal(ended.result, "went");
      const runs = (await first.api("/runs?job=tick")).body.runs;
      assert.equal(runs.length, 1, "one run of the interval job, by one manager");
      const db = new DatabaseSync(join(p.home, "serve.sqlite"), { readOnly: true });
      try {
        const starts = db.prepare("SELECT data FROM events WHERE kind = 'run_start'").all() as {
          data: string;
        }[];
        assert.equal(starts.length, 1);
        const start = JSON.parse(starts[0].data);
        assert.equal(start.manager_pid, first.child.pid);
        assert.equal(start.project, Deno.realPathSync(p.root));
        assert.match(start.manager, /^serve-/);
      } finally {
        db.close();
      }
    } finally {
      assert.equal(await first.stop(), 0);
    }
  },
});

Deno.test({
  name:
    "attack: managers of two projects on one record leave each other's runs alone; one that cannot bind closes none",
  ...opts,
  fn: async () => {
    const home = await tempDir("ab_serve_home_");
    const one = await jobProject({ "blocks/same.lua": WAITER });
    const two = await jobProject({ "blocks/same.lua": 'return "two"' });
    const scratch = join(one.root, "scratch");
    Deno.mkdirSync(scratch);
    writeTree(one.root, { "blocks/same.job.toml": `prompt = "${scratch}"\ncontext = "started"\n` });
    writeTree(two.root, { "blocks/same.job.toml": 'every = "1h"\n' });
    const a = await startManager(one.root, home);
    let runId = "";
    let runPid = 0;
    try {
      runId = (await a.api("/jobs/same/runs", { method: "POST" })).body.run_id;
      const running = await waitForRun(a, runId, "running");
      runPid = running.pid;
      await waitFor(() => pathExists(join(scratch, "started")), {
        what: "project one's run",
        timeoutMs: 60_000,
      });
      // a manager of the other project, same home (the default home is per user): its own job of the
      // same name runs, and project one's live run is neither closed nor killed nor listed
      const b = await startManager(two.root, home);
      try {
        const bRun = await waitForEnd(b, "same");
        assert.equal(bRun.result, "two");
        assert.ok(!(await b.api("/runs")).body.runs.some((r: { run_id: string }) => r.run_id === runId));
        assert.equal((await a.api(`/runs/${runId}`)).body.state, "running");
        assert.ok(processAlive(runPid), "project one's run is untouched by project two's manager");
      } finally {
        assert.equal(await b.stop(), 0);
      }
    } finally {
      await a.kill(); // project one's manager dies with its run live
    }
    // a new manager of project one whose port is taken exits before touching the record's runs
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = (taken.addr as Deno.NetAddr).port;
      const refused = await runManagerToExit(one.root, home, ["--bind", `127.0.0.1:${port}`]);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /cannot listen on 127\.0\.0\.1:\d+/);
      assert.doesNotMatch(refused.stderr, /closed as lost/);
    } finally {
      taken.close();
    }
    const db = new DatabaseSync(join(home, "serve.sqlite"), { readOnly: true });
    try {
      const ends = db.prepare("SELECT count(*) AS n FROM events WHERE kind = 'run_end' AND data LIKE ?")
        .get(`%${runId}%`) as { n: number };
      assert.equal(ends.n, 0, "the run is not closed by a manager that could not listen");
    } finally {
      db.close();
    }
    // one that can listen closes it as lost, and ends what is left of it
    const c = await startManager(one.root, home);
    try {
      const lost = await waitForRun(c, runId, "lost");
      assert.match(lost.message, /manager stopped/);
      await waitFor(() => !processAlive(runPid), { what: "the lost run's process to end" });
    } finally {
      assert.equal(await c.stop(), 0);
    }
  },
});

Deno.test({
  name: "serve: a run gets the manager's credentials; what the run starts does not",
  ...opts,
  fn: async () => {
    const p = await jobProject({
      "blocks/keys.lua": `local r = sh.exec("printenv ANTHROPIC_API_KEY || echo absent")
return std.json.encode({ run = os.getenv("ANTHROPIC_API_KEY") or "absent", child = (r.stdout:gsub("%s+$", "")) })`,
      "blocks/keys.job.toml": "",
    });
    const m = await startManager(p.root, p.home, [], { ANTHROPIC_API_KEY: "sk-from-the-unit" });
    try {
      const id = (await m.api("/jobs/keys/runs", { method: "POST" })).body.run_id;
      const run = await waitForRun(m, id, "ended");
      assert.equal(run.state, "ok", run.message);
      const got = JSON.parse(run.result);
      assert.equal(got.run, "sk-from-the-unit", "the run has the manager's key");
      assert.equal(got.child, "absent", "the run's own children do not inherit it");
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name: "serve: a timeout past the host timer's range (30d) holds instead of ending the run at once",
  ...opts,
  fn: async () => {
    const p = await jobProject({ "blocks/long.lua": WAITER });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    writeTree(p.root, {
      "blocks/long.job.toml": `timeout = "30d"\nprompt = "${scratch}"\ncontext = "started"\n`,
    });
    const m = await startManager(p.root, p.home);
    try {
      const id = (await m.api("/jobs/long/runs", { method: "POST" })).body.run_id;
      // an overflowed timer fires about 1 ms after the start: the run would be timed_out before
      // it could write its file, and would never see `go`
      await waitFor(
        async () =>
          pathExists(join(scratch, "started")) || (await m.api(`/runs/${id}`)).body.state !== "running",
        {
          what: "the run to start",
          timeoutMs: 60_000,
        },
      );
      Deno.writeTextFileSync(join(scratch, "go"), "");
      const run = await waitForRun(m, id, "ended");
      assert.equal(run.state, "ok", run.message);
      assert.equal(run.result, "went");
      const job = (await m.api("/jobs")).body.jobs[0];
      assert.equal(job.timeout_ms, 30 * 24 * 3600 * 1000);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});
