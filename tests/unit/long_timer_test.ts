// longTimeout: a delay past the host timer's 2^31 - 1 ms fires no earlier than asked (a plain
// setTimeout overflows and fires at once), a short one fires, and clear cancels.
import assert from "node:assert/strict";
import { longTimeout, MAX_TIMER_MS } from "../../src/util/long_timer.ts";

Deno.test("long timer: 30 days does not fire before a 50 ms timer; a short one fires; clear cancels", async () => {
  let long = false;
  const t = longTimeout(() => long = true, 30 * 24 * 3600 * 1000);
  assert.ok(30 * 24 * 3600 * 1000 > MAX_TIMER_MS);
  // timers fire in order of their due time: an overflowed one (due in ~1 ms) would come first
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(long, false);
  t.clear();
  let short = 0;
  await new Promise<void>((r) =>
    longTimeout(() => {
      short++;
      r();
    }, 5)
  );
  assert.equal(short, 1);
  let cleared = false;
  longTimeout(() => cleared = true, 0).clear();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(cleared, false);
  assert.throws(() => longTimeout(() => {}, NaN), RangeError);
});
