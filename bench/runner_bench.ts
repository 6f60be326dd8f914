/**
 * The run contract's liveness: how soon an event a block makes reaches the observer of its run,
 * through the in-process runner and through the child runner (the child's event line written to
 * the runner's socket, read and parsed in the parent).
 *
 * The block stages `N` artifacts, each carrying the wall-clock millisecond it was staged at
 * (`std.time.millis()`), 20 ms apart; the observer subtracts that from its own clock when the
 * `artifact` event arrives. Printed: the median and the 90th percentile of that delay for each
 * runner, over `ROUNDS` runs each (one process clock: both sides read the same system time, at
 * millisecond resolution, so delays under a millisecond show as 0 or 1). Also printed: one whole
 * run's wall time through each runner, for the cost of the process the child runner starts.
 * No target: the child's delay is a pipe hop and a JSON parse; it is here to be watched.
 *
 * `BENCH_ROUNDS` (default 5) sets the number of runs per runner.
 */
import { join } from "node:path";
import { ChildRunner } from "../src/runner/child.ts";
import { InProcessRunner } from "../src/runner/in_process.ts";
import type { BlockRunner, RunRequest } from "../src/runner/runner.ts";
import { ProcessGroups } from "../src/proc/group.ts";

const N = 20;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function measure(runner: BlockRunner, request: RunRequest, rounds: number) {
  const delays: number[] = [];
  const walls: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const report = await runner.run(request, {
      observe: (e) => {
        if (e.type === "artifact") delays.push(Date.now() - Number(e.content));
      },
    });
    walls.push(performance.now() - t0);
    if (report.outcome.status !== "returned") {
      throw new Error(`run failed: ${JSON.stringify(report.outcome)}`);
    }
  }
  return { delays, walls };
}

export default async function (): Promise<void> {
  const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
  const dir = await Deno.makeTempDir({ prefix: "ab_runner_bench_" });
  try {
    Deno.writeTextFileSync(
      join(dir, "events.lua"),
      `for i = 1, ${N} do
         bus.emit("artifact", { name = "t" .. i, content = tostring(std.time.millis()) })
         std.task.sleep(0.02)
       end
       return "ok"`,
    );
    const env: Record<string, string> = { NO_COLOR: "1", AGENT_BLOCK_KNL_PATH: ":memory:" };
    for (const k of ["PATH", "HOME", "TMPDIR", "DENO_DIR"]) {
      const v = Deno.env.get(k);
      if (v !== undefined) env[k] = v;
    }
    const request: RunRequest = { script: { path: join(dir, "events.lua") }, projectRoot: dir, env };
    const quiet = () => {};
    const inProcess = await measure(new InProcessRunner({ stdout: quiet, stderr: quiet }), request, rounds);
    const procs = new ProcessGroups();
    const child = await measure(new ChildRunner({ procs, stderr: quiet }), request, rounds);
    const line = (label: string, m: { delays: number[]; walls: number[] }) =>
      console.log(
        `${label}: event delay median ${quantile(m.delays, 0.5)} ms, p90 ${quantile(m.delays, 0.9)} ms ` +
          `(${m.delays.length} events); run wall time median ${quantile(m.walls, 0.5).toFixed(0)} ms`,
      );
    line("in-process runner", inProcess);
    line("child runner     ", child);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => undefined);
  }
}
