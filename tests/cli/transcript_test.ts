/**
 * The pure halves of the readable records: `knl show`'s transcript of hand-made events (the kinds
 * a real run seldom produces together: a failed model call, a refusal, a stop, a thinking block,
 * an event of the script's own, a session left open) and the formatting helpers of src/cli/format.ts.
 */
import assert from "node:assert/strict";
import type { EventRow } from "../../src/knl/store.ts";
import { transcript } from "../../src/cli/transcript.ts";
import { cost, duration, isoLocal, oneLine, table } from "../../src/cli/format.ts";

const T0 = Date.UTC(2026, 4, 1, 12, 0, 0);

function events(list: [string, Record<string, unknown>, Record<string, unknown>?][]): EventRow[] {
  return list.map(([kind, data, meta], i) => ({
    position: i + 1,
    stream: "s_1",
    seq: i + 1,
    epoch_ms: T0 + i * 500,
    kind,
    schema_version: 2,
    meta: meta ?? {},
    data,
  }));
}

Deno.test("transcript: failed calls, refusals, stops, thinking, own events, an open session", () => {
  const text = transcript(
    events([
      ["session_open", { owner: "loop", script: "loop.lua" }, { job: "x", n: 3 }],
      ["msg_user", { content: [{ type: "text", text: "first line\nsecond line" }] }],
      ["llm_request", { model: "m1" }, { beat: 1 }],
      ["llm_call_failed", { error: "anthropic HTTP 529 overloaded" }, { beat: 1 }],
      ["llm_request", { model: "m1" }, { beat: 2 }],
      ["llm_response", {
        model: "m1",
        content: [{ type: "thinking", thinking: "a long line of thought ".repeat(10) }, {
          type: "text",
          text: "ok",
        }],
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
        elapsed_ms: 1500,
      }, { beat: 2 }],
      ["budget_charge", { amount: 1 }, { beat: 2 }],
      ["beat_stopped", { reason: "enough", where: "on_response" }, { beat: 2 }],
      ["beat_refused", { reason: "budget spent" }, { beat: 3 }],
      ["note", { text: "mine" }],
    ]),
    40,
  );
  assert.equal(
    text,
    [
      "session s_1  loop.lua  owner loop",
      `started ${isoLocal(T0)}  labels job=x, n=3`,
      "",
      "> user",
      "  first line",
      "  second line",
      "",
      "── turn 1 · m1",
      "  ! model call failed: anthropic HTTP 5…",
      "",
      "── turn 2 · m1 · 10 in / 5 out · 1.5 s",
      "  (thinking) a long line of thought a l…",
      "  ok",
      "  ! stopped (on_response): enough",
      "  ! refused: budget spent",
      '  · note {"text":"mine"}',
      "",
      "── end · open (no close recorded) · 2 turns · 15 tokens (10 in, 5 out) · 4.5 s",
      "",
    ].join("\n"),
  );
});

Deno.test("format: tables, local ISO times, durations, costs, one-line cuts", () => {
  assert.equal(
    table(["A", "LONGER", "C"], [["xyz", "1", "last"], ["é", "", "-"]]),
    "A    LONGER  C\nxyz  1       last\né            -\n",
  );
  const off = -new Date(T0).getTimezoneOffset();
  const local = new Date(T0 + off * 60_000).toISOString().slice(0, 19);
  const sign = off >= 0 ? "+" : "-";
  const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0");
  const mm = String(Math.abs(off) % 60).padStart(2, "0");
  assert.equal(isoLocal(T0), `${local}${sign}${hh}:${mm}`);
  assert.deepEqual([0, 999.6, 3400, 125_000, 3_725_000].map(duration), [
    "0 ms",
    "1.0 s",
    "3.4 s",
    "2m05s",
    "1h02m",
  ]);
  assert.deepEqual([null, 0.36604, 2].map(cost), ["-", "$0.3660", "$2.0000"]);
  assert.equal(oneLine("a\n  b\r\nc", 0), "a b c");
  assert.equal(oneLine("abcdef", 4), "abc…");
  assert.equal(oneLine("abcd", 4), "abcd");
  assert.equal(oneLine("😀😀😀😀😀", 3), "😀😀…"); // code points, never half a character
});
