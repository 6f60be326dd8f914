/**
 * `agent-block serve` running jobs (issue 16 §1): a fast job, a deferring one, and one that
 * overruns its timeout leaving daemons behind (its whole tree ends); `--max-live` with six jobs
 * due at once; a result over 64 KiB kept as a pointer; a run's counts (sessions) on its record. Real managers, real runs, real record.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DAEMON_PID_FILES, lacksProcessTools, processAlive, waitFor, writeDaemonScript } from "../helpers.ts";
import { jobProject, startManager, waitForEnd } from "./serve_helpers.ts";

const skip = lacksProcessTools("setsid");
if (skip) console.warn(`serve_runs_test: daemon test skipped: ${skip}`);
const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "serve: a fast job, a deferring job, and a job past its timeout whose daemons end with it",
  ...opts,
  ignore: skip !== undefined,
  fn: async () => {
    const p = await jobProject({
      "blocks/fast/init.lua": 'require("knl").session({ owner = "fast" }, function() end)\n' +
        'return "fast " .. _PROMPT .. " " .. std.env.get("AGENT_BLOCK_RUN_ID")',
      "blocks/fast/job.toml": 'every = "1h"\nprompt = "hello"\n',
      "blocks/later.lua": 'job.defer("nothing to do yet")',
      "blocks/later.job.toml": 'every = "1h"\n',
      // The timeout is what is under attack: long enough for a loaded machine to start the
      // daemons (the block says so by a file), then the run waits far past it.
      "blocks/overrun.lua": `sh.exec("sh '" .. _PROMPT .. "/daemons.sh' '" .. _PROMPT .. "'")
std.fs.write(_PROMPT .. "/started", "")
std.task.sleep(300)`,
    });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    writeDaemonScript(scratch);
    Deno.writeTextFileSync(
      join(p.root, "blocks/overrun.job.toml"),
      `every = "1h"\ntimeout = "8s"\nprompt = "${scratch}"\n`,
    );
    const m = await startManager(p.root, p.home);
    try {
      const fast = await waitForEnd(m, "fast");
      assert.equal(fast.state, "ok");
      assert.equal(fast.exit_code, 0);
      assert.equal(fast.result, `fast hello ${fast.run_id}`);
      assert.equal(Deno.readTextFileSync(fast.result_file), fast.result);
      assert.equal(fast.result_file, join(p.home, "runs", "fast", `${fast.run_id}.json`));
      // what the run did, from its events relayed by the child runner; its session for `knl show`
      assert.equal(fast.counts.turns, 0);
      assert.equal(fast.counts.tool_calls, 0);
      assert.equal(fast.counts.sessions.length, 1);
      assert.match(fast.counts.sessions[0], /^s_/);

      const later = await waitForEnd(m, "later");
      assert.equal(later.state, "deferred");
      assert.equal(later.exit_code, 75);
      assert.equal(later.message, "nothing to do yet");
      assert.equal(later.result, null);

      await waitFor(() => {
        try {
          return Deno.statSync(join(scratch, "started")).isFile;
        } catch {
          return false;
        }
      }, { what: "the overrunning block to start its daemons", timeoutMs: 60_000 });
      const pids = DAEMON_PID_FILES.map((f) => Number(Deno.readTextFileSync(join(scratch, f)).trim()));
      const over = await waitForEnd(m, "overrun");
      assert.equal(over.state, "timed_out");
      assert.equal(over.exit_code, 124);
      await waitFor(() => pids.every((x) => !processAlive(x)), { what: "the daemons to end with the run" });

      const detail = (await m.api(`/runs/${over.run_id}`)).body;
      assert.equal(typeof detail.stderr_tail, "string");
      const jobs = (await m.api("/jobs")).body.jobs;
      assert.deepEqual(jobs.map((j: { name: string }) => j.name), ["fast", "later", "overrun"]);
      assert.equal(jobs[0].last_end.run_id, fast.run_id);
      // when `every` makes it due next: its last end plus an hour (what the dashboard shows)
      assert.equal(jobs[0].next_run_ms, jobs[0].last_end.ended_ms + 3_600_000);
      const metrics = (await m.api("/metrics")).body as string;
      assert.match(metrics, /agent_block_serve_runs_total\{job="overrun",state="timed_out"\} 1/);
      assert.match(metrics, /agent_block_serve_run_duration_seconds_count 3/);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name: "serve: --max-live 2 with six jobs due at once runs two at a time, the rest waiting in order",
  ...opts,
  fn: async () => {
    const files: Record<string, string> = {};
    for (let i = 1; i <= 6; i++) {
      files[`blocks/j${i}.lua`] =
        `while not std.fs.exists("release") do std.task.sleep(0.05) end\nreturn "${i}"`;
      files[`blocks/j${i}.job.toml`] = 'every = "1h"\n';
    }
    const p = await jobProject(files);
    const m = await startManager(p.root, p.home, ["--max-live", "2"]);
    try {
      const live = async () =>
        (await m.api("/jobs")).body.jobs.filter((j: { live_run: unknown }) => j.live_run !== null).length;
      await waitFor(async () => (await live()) === 2, { what: "two live runs" });
      await waitFor(async () => /agent_block_serve_queue_length 4\n/.test((await m.api("/metrics")).body), {
        what: "four runs waiting",
      });
      assert.equal(await live(), 2);
      Deno.writeTextFileSync(join(p.root, "release"), "");
      await waitFor(async () => {
        const runs = (await m.api("/runs")).body.runs;
        return runs.length === 6 && runs.every((r: { state: string }) => r.state === "ok");
      }, { what: "all six runs to end ok" });
      const runs = (await m.api("/runs")).body.runs as {
        job: string;
        started_ms: number;
        ended_ms: number;
      }[];
      // Never more than two at once: at each start, count the runs started and not yet ended.
      for (const r of runs) {
        const overlapping = runs.filter((o) => o.started_ms <= r.started_ms && o.ended_ms > r.started_ms);
        assert.ok(overlapping.length <= 2, `${overlapping.length} runs live at once`);
      }
      // The first two started are the first two due (all were due at the same tick: by name).
      const order = [...runs].sort((a, b) => a.started_ms - b.started_ms).map((r) => r.job);
      assert.deepEqual(order.slice(0, 2).sort(), ["j1", "j2"]);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name: "serve: a result over 64 KiB is a pointer to its file, not inline",
  ...opts,
  fn: async () => {
    const p = await jobProject({
      "blocks/big.lua": 'return string.rep("x", 70000)',
      "blocks/big.job.toml": 'every = "1h"\n',
      "blocks/edge.lua": 'return string.rep("y", 65536)',
      "blocks/edge.job.toml": 'every = "1h"\n',
    });
    const m = await startManager(p.root, p.home);
    try {
      const big = await waitForEnd(m, "big");
      assert.equal(big.state, "ok");
      assert.equal(big.result, null);
      assert.equal(big.result_bytes, 70000);
      assert.equal(Deno.readTextFileSync(big.result_file).length, 70000);
      const edge = await waitForEnd(m, "edge");
      assert.equal(edge.result?.length, 65536);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name:
    "serve: a POST with a streamed body starts the run, and the manager prints no Deno deprecation warning",
  ...opts,
  fn: async () => {
    const p = await jobProject({
      "blocks/now.lua": 'return "now"',
      "blocks/now.job.toml": 'timeout = "1m"\n',
    });
    const m = await startManager(p.root, p.home);
    try {
      // a body of unknown length (chunked): the guard reads it and hands the route a copy
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode("{}"));
          c.close();
        },
      });
      const r = await m.api("/jobs/now/runs", { method: "POST", body, duplex: "half" } as RequestInit);
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const run = await waitForEnd(m, "now");
      assert.equal(run.result, "now");
    } finally {
      assert.equal(await m.stop(), 0);
    }
    assert.doesNotMatch(m.stderr(), /request\.signal|legacy|deprecat/i, m.stderr());
  },
});
