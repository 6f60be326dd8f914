/**
 * `GET /metrics`: the scheduler's counters in the Prometheus text format (version 0.0.4).
 *
 * Owns the metric names, all prefixed `agent_block_serve_`:
 * - `runs_total{job,state}` (counter): ended runs on the record, by job and end state;
 * - `run_duration_seconds` (histogram): wall time of ended runs (`DURATION_BUCKETS`);
 * - `live_runs` (gauge), `queue_length` (gauge: due runs waiting for a slot under `--max-live`);
 * - `last_tick_timestamp_seconds` (gauge; absent before the first tick).
 * Invariant: a pure function of the counters; label values are escaped as the format says.
 */
import { DURATION_BUCKETS, type SchedulerMetrics } from "./scheduler.ts";

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

/** The exposition text of `m`. */
export function renderMetrics(m: SchedulerMetrics): string {
  const p = "agent_block_serve_";
  const out: string[] = [];
  out.push(`# HELP ${p}runs_total Ended runs by job and state.`, `# TYPE ${p}runs_total counter`);
  for (const [job, states] of [...m.byJobState].sort(([a], [b]) => a < b ? -1 : 1)) {
    for (const [state, n] of states) out.push(`${p}runs_total{job="${esc(job)}",state="${state}"} ${n}`);
  }
  out.push(
    `# HELP ${p}run_duration_seconds Wall time of ended runs.`,
    `# TYPE ${p}run_duration_seconds histogram`,
  );
  DURATION_BUCKETS.forEach((b, i) => out.push(`${p}run_duration_seconds_bucket{le="${b}"} ${m.buckets[i]}`));
  out.push(`${p}run_duration_seconds_bucket{le="+Inf"} ${m.durationCount}`);
  out.push(
    `${p}run_duration_seconds_sum ${m.durationSum}`,
    `${p}run_duration_seconds_count ${m.durationCount}`,
  );
  out.push(`# HELP ${p}live_runs Runs going now.`, `# TYPE ${p}live_runs gauge`, `${p}live_runs ${m.live}`);
  out.push(
    `# HELP ${p}queue_length Due runs waiting for a slot (--max-live).`,
    `# TYPE ${p}queue_length gauge`,
    `${p}queue_length ${m.queue}`,
  );
  if (m.lastTickMs !== undefined) {
    out.push(
      `# HELP ${p}last_tick_timestamp_seconds When the scheduler last ticked.`,
      `# TYPE ${p}last_tick_timestamp_seconds gauge`,
      `${p}last_tick_timestamp_seconds ${m.lastTickMs / 1000}`,
    );
  }
  return out.join("\n") + "\n";
}
