/**
 * `--events FILE`: the run's kernel events as JSON Lines, streamed as they are committed.
 *
 * Owns turning the seam's `events` (`run_events.ts`) into bytes for a sink: one line per row,
 * each `exportLine` of the row — the very function `agent-block knl export --as events` prints
 * with, over the same decoding (`committedRow` is `read`'s `decodeRow`), so for each session the
 * stream's lines are that export's lines, in the same order (a run writing several sessions
 * interleaves them in commit order; `stream` says whose). One transaction is one write, so a
 * reader following the file never sees half a commit's lines. Other events (MCP notes, the end)
 * are not kernel events and are not written.
 *
 * Invariant: it only encodes — the sink decides where the bytes go and raises if it cannot write
 * (the run's guarded fan-out then detaches this observer with one warning).
 */
import { exportLine } from "../knl/export.ts";
import type { RunObserver } from "./run_events.ts";

const enc = new TextEncoder();

/** An observer writing each committed transaction's rows to `sink` as JSON Lines. */
export function eventsJsonl(sink: (bytes: Uint8Array) => void): RunObserver {
  return (e) => {
    if (e.type !== "events") return;
    let text = "";
    for (const row of e.rows) text += exportLine(row) + "\n";
    sink(enc.encode(text));
  };
}
