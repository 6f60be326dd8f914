/**
 * Ending many children: `ProcessGroups.endAll` with `BENCH_CHILDREN` (default 1000) live
 * children, half of which ignore SIGTERM, against a baseline run alongside — the same children
 * started raw and ended by the least any design must do (SIGKILL to each group, then each exit
 * awaited). Target (issue 26 §1): `endAll` within the grace period plus 1 s, i.e. its time past
 * the grace at most 1 s; the ratio to the baseline says what the walks of the process table cost
 * on top of the kernel's own work.
 *
 * Before the batch design each child's ending walked the whole table (once to start, again every
 * 20 ms round of its wait): 200 children took 85 s, 1000 did not finish.
 */
import { join } from "node:path";
import { ProcessGroups } from "../src/proc/group.ts";

const GRACE_MS = 1000;

async function startedAll(dir: string, n: number): Promise<void> {
  while ([...Deno.readDirSync(dir)].length < n) await new Promise((r) => setTimeout(r, 20));
}

function body(dir: string, i: number): string {
  return `${i % 2 ? "trap '' TERM; " : ""}: > ${join(dir, String(i))}; exec sleep 1000`;
}

export default async function procBench(): Promise<void> {
  if (Deno.build.os !== "linux") {
    console.log(`skipped: not Linux (${Deno.build.os})`);
    return;
  }
  const n = Number(Deno.env.get("BENCH_CHILDREN") ?? 1000);
  // Baseline: raw children in groups of their own, SIGKILLed group by group, exits awaited.
  const baseDir = await Deno.makeTempDir({ prefix: "ab_bench_proc_" });
  const raw: Deno.ChildProcess[] = [];
  for (let i = 0; i < n; i++) {
    raw.push(
      new Deno.Command("/bin/sh", {
        args: ["-c", body(baseDir, i)],
        stdout: "null",
        stderr: "null",
        detached: true,
      })
        .spawn(),
    );
  }
  await startedAll(baseDir, n);
  let t0 = performance.now();
  for (const c of raw) Deno.kill(-c.pid, "SIGKILL");
  await Promise.all(raw.map((c) => c.status));
  const baseline = performance.now() - t0;
  Deno.removeSync(baseDir, { recursive: true });

  const dir = await Deno.makeTempDir({ prefix: "ab_bench_proc_" });
  const groups = new ProcessGroups(GRACE_MS);
  for (let i = 0; i < n; i++) {
    groups.spawn({ cmd: ["/bin/sh", "-c", body(dir, i)], stdout: "null", stderr: "null" });
  }
  await startedAll(dir, n);
  t0 = performance.now();
  await groups.endAll();
  const ended = performance.now() - t0;
  Deno.removeSync(dir, { recursive: true });

  const past = ended - GRACE_MS;
  console.log(`children            ${n} (half ignore SIGTERM), grace ${GRACE_MS} ms`);
  console.log(`baseline (SIGKILL)  ${baseline.toFixed(0)} ms`);
  console.log(`endAll              ${ended.toFixed(0)} ms (${past.toFixed(0)} ms past the grace)`);
  console.log(`past grace/baseline ${(past / baseline).toFixed(2)}`);
  console.log(`target              past the grace <= 1000 ms: ${past <= 1000 ? "met" : "NOT met"}`);
}
