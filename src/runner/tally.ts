/**
 * What a run has done so far, counted from its `RunEvent` stream: model turns, tokens, tool
 * calls, cost, sessions and the last step — for consumers that show a run as it goes (the MCP
 * server's progress notifications, `serve`'s record and dashboard).
 *
 * Layer: runner. Owns the counting rule, from the kernel's record only (nothing is estimated):
 * a turn is an `llm_response` row, its tokens that row's `usage.input_tokens`/`output_tokens`,
 * its cost `usage.cost_usd` (`llm_proto`'s price table; `costUsd` stays `undefined` while no turn
 * was priced); a tool call is a `tool_result` row or an `mcp_call` event; a session is a
 * `session_open` event.
 *
 * Invariant: it only counts; `observe` never throws and keeps no reference to the events.
 */
import type { RunEvent, RunObserver } from "../obs/run_events.ts";

/** A run's counts so far. */
export interface RunCounts {
  /** Model turns (`llm_response` rows). */
  turns: number;
  /** Input tokens over the turns. */
  tokensIn: number;
  /** Output tokens over the turns. */
  tokensOut: number;
  /** Tool calls (`tool_result` rows and MCP `tools/call`s). */
  toolCalls: number;
  /** Cost of the priced turns, USD (`undefined`: no turn was priced). */
  costUsd?: number;
  /** Kernel sessions the run opened, in order. */
  sessions: string[];
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Counts a run's events; `step` says what the last counted event was, in a few words. */
export class RunTally {
  /** The counts so far (updated in place). */
  readonly counts: RunCounts = { turns: 0, tokensIn: 0, tokensOut: 0, toolCalls: 0, sessions: [] };
  /** The last step counted ("turn 2", "tool word_count", "mcp fs.read"), or undefined. */
  step: string | undefined;

  /**
   * A tally; `onStep` hears of each step.
   * @param onStep called after each counted step (a turn, a tool call, a session opened)
   */
  constructor(private readonly onStep?: (tally: RunTally) => void) {}

  /** The observer to register. */
  readonly observe: RunObserver = (e: RunEvent) => {
    const c = this.counts;
    let changed = false;
    // Each counted row is its own step, also when one commit carries several.
    const stepped = () => this.onStep?.(this);
    if (e.type === "events") {
      for (const row of e.rows) {
        if (row.kind === "llm_response") {
          const u = (row.data.usage ?? {}) as Record<string, unknown>;
          c.turns++;
          c.tokensIn += num(u.input_tokens);
          c.tokensOut += num(u.output_tokens);
          if (typeof u.cost_usd === "number") c.costUsd = (c.costUsd ?? 0) + u.cost_usd;
          this.step = `turn ${c.turns}`;
          stepped();
        } else if (row.kind === "tool_result") {
          c.toolCalls++;
          this.step = `tool ${typeof row.data.name === "string" ? row.data.name : "?"}`;
          stepped();
        }
      }
    } else if (e.type === "mcp_call") {
      c.toolCalls++;
      this.step = `mcp ${e.server}.${e.tool}`;
      changed = true;
    } else if (e.type === "session_open") {
      c.sessions.push(e.session);
      changed = true;
    }
    if (changed) this.onStep?.(this);
  };

  /** One line: "turn 2, tool word_count; 2 turns, 290 tokens in / 38 out, 1 tool call, $0.0014". */
  summary(): string {
    const c = this.counts;
    const cost = c.costUsd !== undefined ? `, $${c.costUsd.toFixed(4)}` : "";
    return `${this.step ?? "started"}; ${c.turns} turn${
      c.turns === 1 ? "" : "s"
    }, ${c.tokensIn} tokens in / ` +
      `${c.tokensOut} out, ${c.toolCalls} tool call${c.toolCalls === 1 ? "" : "s"}${cost}`;
  }
}
