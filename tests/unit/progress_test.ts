/**
 * The `--progress` wording (src/cli/progress.ts), pure: synthetic run events in, lines out —
 * turns with and without a price, tool calls that pass and fail, MCP notes, refusals, the end
 * with its totals; kinds that are not steps print nothing.
 */
import assert from "node:assert/strict";
import { ProgressReporter } from "../../src/cli/progress.ts";
import type { RunEvent } from "../../src/obs/run_events.ts";
import type { EventRow } from "../../src/knl/store.ts";

let position = 0;
const row = (kind: string, data: Record<string, unknown>, meta: Record<string, unknown> = {}): EventRow => ({
  position: ++position,
  stream: "s_1",
  seq: position,
  epoch_ms: 0,
  kind,
  schema_version: 2,
  meta,
  data,
});
const events = (...rows: EventRow[]): RunEvent => ({ type: "events", rows });

function linesOf(evs: RunEvent[]): string[] {
  const out: string[] = [];
  const p = new ProgressReporter((l) => out.push(l));
  for (const e of evs) p.observe(e);
  return out;
}

Deno.test("progress: one line per step, costs only where the kernel recorded one", () => {
  const usage = (i: number, o: number, cost?: number) => ({
    input_tokens: i,
    output_tokens: o,
    cost_usd: cost,
  });
  const lines = linesOf([
    events(row("session_open", { owner: "agent" }), row("msg_user", { content: "hi" })),
    events(
      row("llm_request", { model: "m" }, { beat: 1 }),
      row("llm_response", { model: "m", usage: usage(120, 30), elapsed_ms: 1420, stop_reason: "tool_use" }, {
        beat: 1,
      }),
      row("tool_call", { id: "t1", name: "word_count", input: {} }, { beat: 1 }),
      row("tool_result", { id: "t1", name: "word_count", is_error: false, elapsed_ms: 0.31 }, { beat: 1 }),
      row("tool_result", {
        id: "t2",
        name: "fs_read",
        is_error: true,
        elapsed_ms: 4,
        content: "no such file\nsecond line",
      }, { beat: 1 }),
    ),
    { type: "mcp_connect", server: "echo", transport: "stdio", ms: 230.2, ok: true },
    { type: "mcp_connect", server: "web", transport: "http", ms: 12, ok: false, error: "refused" },
    { type: "mcp_call", server: "echo", tool: "echo", ms: 12, ok: true },
    { type: "mcp_call", server: "echo", tool: "boom", ms: 3, ok: false, error: "tool failed" },
    { type: "a2a_call", agent: "http://127.0.0.1:7790", method: "send", ms: 40, ok: true },
    { type: "a2a_call", agent: "http://127.0.0.1:7790", method: "get", ms: 2, ok: false, error: "gone" },
    events(
      row("llm_response", {
        model: "claude-haiku-4-5",
        usage: { ...usage(170, 8, 0.00021), cache_read_input_tokens: 100 },
        elapsed_ms: 800,
        stop_reason: "end_turn",
      }, { beat: 2 }),
      row("llm_call_failed", { error: "HTTP 529 overloaded", elapsed_ms: 50 }, { beat: 3 }),
      row("beat_refused", { reason: "budget exhausted" }, { beat: 4 }),
      row("beat_stopped", { reason: "too long", where: "filter" }, { beat: 5 }),
      row("note", { text: "a block's own event" }),
      row("agent_result", { ok: false, stop_reason: "error", num_turns: 2, error: "the model failed" }),
      row("session_close", { status: "error", error: "the model failed" }),
    ),
    { type: "end", outcome: { status: "returned", value: "x" }, ms: 2210 },
  ]);
  assert.deepEqual(lines, [
    "[progress] session s_1 (agent) opened",
    "[progress] turn 1: m, 120 tokens in / 30 out, 1.4 s, stop tool_use",
    "[progress] tool word_count: ok in <1 ms",
    "[progress] tool fs_read: error after 4 ms: no such file second line",
    "[progress] mcp: connected echo (stdio) in 230 ms",
    "[progress] mcp: connect to web (http) failed after 12 ms: refused",
    "[progress] mcp: echo.echo ok in 12 ms",
    "[progress] mcp: echo.boom failed after 3 ms: tool failed",
    "[progress] a2a: send http://127.0.0.1:7790 ok in 40 ms",
    "[progress] a2a: get http://127.0.0.1:7790 failed after 2 ms: gone",
    "[progress] turn 2: claude-haiku-4-5, 170 tokens in (+100 cached) / 8 out, 800 ms, stop end_turn, " +
    "cost so far $0.0002",
    "[progress] turn 3: the model call failed after 50 ms: HTTP 529 overloaded",
    "[progress] turn 4 refused: budget exhausted",
    "[progress] turn 5 stopped (filter): too long",
    "[progress] agent: error after 2 turns: the model failed",
    "[progress] session s_1 closed: error (the model failed)",
    "[progress] end: returned after 2.2 s; stop reason error; 2 turns, 290 tokens in / 38 out, 2 tool calls, " +
    "cost $0.0002",
  ]);
});

Deno.test("progress: the end of a run that raised, with nothing priced and nothing recorded", () => {
  const lines = linesOf([{
    type: "end",
    outcome: { status: "raised", code: "script", message: "boom\nstack traceback: ...", traceback: "" },
    ms: 5,
  }]);
  assert.deepEqual(lines, [
    "[progress] end: raised (script) after 5 ms: boom stack traceback: ...; 0 turns, 0 tokens in / 0 out, 0 tool calls",
  ]);
});
