/**
 * A flood of `std.task.spawn` (issue 26 §1): 50 000 spawns ended in an internal error
 * (`ab:runtime:234`, a nil slot in the ready queue) — the watchdog preempted a task between the
 * two statements of an append to the queue, and the scheduler then appended the preempted task
 * into the same slot (or read the empty one). 100 000 tasks must all run, or, under a heap too
 * small for them, the run must end with the memory limit's own error, never an internal one.
 *
 * Not left to luck: the runs preempt at every watchdog hook (`preemptMs: 0`, every 10 000
 * instructions instead of every 100 ms), and the loop's length per spawn varies, so preemptions
 * land on every instruction of the append hundreds of times over.
 */
import assert from "node:assert/strict";
import { resultOf, runLua } from "../helpers.ts";

/** Spawns `n` tasks that count themselves, joins them all, returns how many ran. */
const FLOOD = (n: number) => `
  local ran, handles = 0, {}
  for i = 1, ${n} do
    for _ = 1, i % 7 do end -- shifts where the next preemption lands
    handles[i] = std.task.spawn(function() ran = ran + 1 end)
  end
  std.task.all(handles)
  return std.json.encode({ ran = ran, spawned = #handles })`;

Deno.test("attack: 100 000 std.task.spawn all run (no nil slot in the ready queue)", async () => {
  const r = await runLua(FLOOD(100_000), { limits: { preemptMs: 0 } });
  assert.deepEqual(resultOf(r), { ran: 100_000, spawned: 100_000 });
  assert.doesNotMatch(r.stderr, /ab:runtime/);
});

Deno.test("attack: 100 000 std.task.spawn under --memory-limit run, or end with the limit's error", async () => {
  for (const mb of [64, 16]) {
    const r = await runLua(FLOOD(100_000), { limits: { memoryBytes: mb << 20, preemptMs: 0 } });
    if (r.outcome.status === "returned") {
      assert.deepEqual(resultOf(r), { ran: 100_000, spawned: 100_000 }, `${mb} MiB`);
      continue;
    }
    assert.equal(r.outcome.status, "raised", `${mb} MiB: ${JSON.stringify(r.outcome)}`);
    const message = (r.outcome as { message: string }).message;
    assert.match(message, /memory limit exceeded/, `${mb} MiB`);
    assert.doesNotMatch(message, /ab:runtime|nil value/, `${mb} MiB`);
  }
});
