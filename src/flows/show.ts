/**
 * `flow show RUN`: a flow run's record as readable lines (a view over `knl export`).
 *
 * Invariant: read-only; one line per `flow.*` event, in record order, with the time since the run
 * started; values are shown shortened (the record has them whole); the last line is the run's
 * state as `flow runs` shows it (`interrupted`: recorded running, but no process runs it).
 */
import type { EventRow } from "../knl/store.ts";
import type { FlowRunState } from "./record.ts";

const short = (v: unknown, max = 100) => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  if (s === undefined) return "";
  return s.length > max ? s.slice(0, max - 3) + "..." : s;
};

/** The readable view of a run's events, ending with its `state`. */
export function showRun(events: readonly EventRow[], state: FlowRunState): string {
  const t0 = events[0]?.epoch_ms ?? 0;
  const lines: string[] = [];
  for (const e of events) {
    const d = e.data as Record<string, unknown>;
    const at = `+${((e.epoch_ms - t0) / 1000).toFixed(3)}s`;
    const step = `${d.ref}#${d.occurrence}`;
    let text: string;
    switch (e.kind) {
      case "flow.run_started":
        text = `run started: flow ${d.blueprint_id} (${d.blueprint_file}); init ${short(d.init_ctx)}`;
        break;
      case "flow.run_resumed":
        text = `run resumed${
          d.rerun_from ? ` from step ${d.rerun_from}` : d.answered ? ` with an answer for ${d.answered}` : ""
        }`;
        break;
      case "flow.step_dispatched":
        text = `${step} dispatched (${d.kind}) key ${d.key}`;
        break;
      case "flow.replay_hit":
        text = `${step} replayed (${d.status})`;
        break;
      case "flow.step_completed": {
        const what = d.value_ref
          ? `value in ${(d.value_ref as { path: string }).path}`
          : d.error
          ? short(d.error)
          : d.reason !== undefined
          ? short(d.reason)
          : short(d.value);
        const u = d.usage as { turns?: number; input_tokens?: number; output_tokens?: number } | null;
        const spend = u && u.turns
          ? `, ${u.turns} turns, ${u.input_tokens} tokens in / ${u.output_tokens} out`
          : "";
        text = `${step} ${d.status} in ${d.duration_ms} ms${spend}: ${what}`;
        break;
      }
      case "flow.replay_cut":
        text = `replay cut from step ${d.from_step}`;
        break;
      case "flow.cancel_requested":
        text = `cancel requested: ${d.reason}`;
        break;
      case "flow.run_waiting":
        text = `waiting at ${d.step}: ${d.reason}`;
        break;
      case "flow.run_finished":
        text = `run ${d.status}${d.error ? `: ${short((d.error as { message: string }).message, 200)}` : ""}${
          d.ctx !== undefined ? `; ctx ${short(d.ctx)}` : ""
        }`;
        break;
      default:
        continue;
    }
    lines.push(`${at.padStart(10)}  ${text}`);
  }
  const run = events[0]?.stream ?? "RUN";
  const hint = state === "interrupted"
    ? ` (recorded running, but no process runs it: agent-block flow resume ${run} continues it)`
    : "";
  lines.push(`${"".padStart(10)}  state: ${state}${hint}`);
  return lines.join("\n");
}
