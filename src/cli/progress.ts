/**
 * `--progress`: one human line per step of a run, as it happens — a formatter of the run's
 * events (`src/obs/run_events.ts`), nothing more.
 *
 * Owns the wording. Lines start `[progress] ` and say, from the kernel's record (a session's
 * open and close, each model turn, each tool call, an agent's result) and the MCP host's notes
 * (connects, tool calls), then the run's end:
 *   [progress] session s_... (agent) opened
 *   [progress] turn 1: claude-sonnet-4-5, 120 tokens in / 30 out, 1.4 s, stop tool_use, cost so far $0.0008
 *   [progress] tool word_count: ok in 3 ms
 *   [progress] mcp: connected everything (stdio) in 230 ms
 *   [progress] mcp: everything.echo ok in 12 ms
 *   [progress] agent: completed after 2 turns
 *   [progress] end: returned after 1.9 s; stop reason completed; 2 turns, 290 tokens in / 38 out, 1 tool call, cost $0.0011
 * Costs are the kernel's `usage.cost_usd`, which `llm_proto` computes from its price table
 * (`require("llm_proto").prices`, overridable per run): a turn of a model with no price there
 * shows no cost, and the totals count only the priced turns — nothing is estimated here.
 * Kinds other than those (the conversation's messages, a block's own events) are not steps and
 * print nothing; a model call made with `llm.chat` outside a kernel session is not recorded, so
 * it has no line either.
 *
 * Durations, costs and quoted text are written as the CLI's other human listings write them
 * (`format.ts`, shared with `knl show` and `knl sessions`).
 *
 * Invariant: it only formats — the sink (`write`) decides where lines go (the CLI: stderr, never
 * stdout); a failure to write is the sink's, raised to the run's guarded fan-out.
 */
import type { EventRow } from "../knl/store.ts";
import type { RunEvent, RunObserver } from "../obs/run_events.ts";
import { cost as dollars, duration as span, oneLine } from "./format.ts";

/** `format.ts`'s duration, with what it would round to `0 ms` said as `<1 ms`. */
function duration(ms: number): string {
  return ms < 0.5 ? "<1 ms" : span(ms);
}

/** Longest text quoted from an error or a result, in characters (one line). */
const QUOTE = 160;

/** `v` (a string, or JSON of anything else) on one line of at most `QUOTE` characters. */
function quote(v: unknown): string {
  return oneLine(typeof v === "string" ? v : JSON.stringify(v) ?? String(v), QUOTE);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

/** Formats a run's events into progress lines handed to `write` (without newline). */
export class ProgressReporter {
  #turns = 0;
  #tokensIn = 0;
  #tokensOut = 0;
  #tools = 0;
  #cost = 0;
  #priced = false;
  #stopReason: string | undefined;

  /** @param write takes one line (no newline) */
  constructor(private readonly write: (line: string) => void) {}

  /** The observer to register (`BlockConfig.builder(...).observe(reporter.observe)`). */
  readonly observe: RunObserver = (e: RunEvent) => {
    switch (e.type) {
      case "events":
        for (const row of e.rows) {
          const line = this.#row(row);
          if (line !== undefined) this.write(`[progress] ${line}`);
        }
        return;
      case "mcp_connect":
        this.write(
          e.ok
            ? `[progress] mcp: connected ${e.server} (${e.transport}) in ${duration(e.ms)}`
            : `[progress] mcp: connect to ${e.server} (${e.transport}) failed after ${duration(e.ms)}: ${
              quote(e.error ?? "")
            }`,
        );
        return;
      case "mcp_call":
        this.write(
          e.ok
            ? `[progress] mcp: ${e.server}.${e.tool} ok in ${duration(e.ms)}`
            : `[progress] mcp: ${e.server}.${e.tool} failed after ${duration(e.ms)}: ${quote(e.error ?? "")}`,
        );
        return;
      case "a2a_call":
        this.write(
          e.ok
            ? `[progress] a2a: ${e.method} ${e.agent} ok in ${duration(e.ms)}`
            : `[progress] a2a: ${e.method} ${e.agent} failed after ${duration(e.ms)}: ${
              quote(e.error ?? "")
            }`,
        );
        return;
      case "end":
        this.write(`[progress] end: ${this.#end(e)}`);
        return;
    }
  };

  #row(row: EventRow): string | undefined {
    const d = row.data;
    const beat = row.meta.beat;
    switch (row.kind) {
      case "session_open": {
        const owner = d.owner === undefined || d.owner === null ? "" : ` (${quote(d.owner)})`;
        return `session ${row.stream}${owner} opened`;
      }
      case "session_close":
        return `session ${row.stream} closed: ${d.status ?? "?"}${
          typeof d.error === "string" && d.status !== "ok" ? ` (${quote(d.error)})` : ""
        }`;
      case "llm_response": {
        const u = (d.usage ?? {}) as Record<string, unknown>;
        const tin = num(u.input_tokens), tout = num(u.output_tokens), cached = num(u.cache_read_input_tokens);
        this.#turns++;
        this.#tokensIn += tin;
        this.#tokensOut += tout;
        let cost = "";
        if (typeof u.cost_usd === "number") {
          this.#cost += u.cost_usd;
          this.#priced = true;
          cost = `, cost so far ${dollars(this.#cost)}`;
        }
        const model = typeof d.model === "string" ? `${d.model}, ` : "";
        return `turn ${beat ?? this.#turns}: ${model}${tin} tokens in${
          cached ? ` (+${cached} cached)` : ""
        } / ` +
          `${tout} out, ${duration(num(d.elapsed_ms))}, stop ${d.stop_reason ?? "?"}${cost}`;
      }
      case "llm_call_failed":
        return `turn ${beat ?? "?"}: the model call failed after ${duration(num(d.elapsed_ms))}: ${
          quote(d.error)
        }`;
      case "beat_refused":
        return `turn ${beat ?? "?"} refused: ${quote(d.reason)}`;
      case "beat_stopped":
        return `turn ${beat ?? "?"} stopped (${d.where ?? "?"}): ${quote(d.reason)}`;
      case "tool_result":
        this.#tools++;
        return d.is_error === true
          ? `tool ${d.name}: error after ${duration(num(d.elapsed_ms))}: ${quote(d.content)}`
          : `tool ${d.name}: ok in ${duration(num(d.elapsed_ms))}`;
      case "agent_result":
        if (typeof d.stop_reason === "string") this.#stopReason = d.stop_reason;
        return `agent: ${d.stop_reason ?? "?"} after ${plural(num(d.num_turns), "turn")}${
          d.ok === true ? "" : `: ${quote(d.error ?? "failed")}`
        }`;
      default:
        return undefined;
    }
  }

  #end(e: Extract<RunEvent, { type: "end" }>): string {
    const o = e.outcome;
    let how: string;
    switch (o.status) {
      case "raised":
        how = `raised (${o.code}) after ${duration(e.ms)}: ${quote(o.message)}`;
        break;
      case "deferred":
        how = `deferred after ${duration(e.ms)}: ${quote(o.reason)}`;
        break;
      case "exited":
        how = `exited with ${o.code} after ${duration(e.ms)}`;
        break;
      case "cancelled":
        how = `cancelled after ${duration(e.ms)}: ${quote(o.reason)}`;
        break;
      case "timed_out":
        how = `timed out after ${o.seconds} s`;
        break;
      default:
        how = `returned after ${duration(e.ms)}`;
    }
    const stop = this.#stopReason === undefined ? "" : `; stop reason ${this.#stopReason}`;
    const cost = this.#priced ? `, cost ${dollars(this.#cost)}` : "";
    return `${how}${stop}; ${
      plural(this.#turns, "turn")
    }, ${this.#tokensIn} tokens in / ${this.#tokensOut} out, ` +
      `${plural(this.#tools, "tool call")}${cost}`;
  }
}
