/**
 * Request timeouts on one timer (src/clients/llm/deadlines.ts), on a hand-driven clock: when the
 * timer is armed, what fires when, pushing a deadline back, ending one, stopping the clock. One
 * test runs on the real timers to show nothing outlives `stop()` (the op sanitizer would fail it).
 */
import assert from "node:assert/strict";
import { Deadlines, type TimerSource } from "../../../src/clients/llm/deadlines.ts";

/** A clock that moves only when told, with the timers it was asked for. */
class HandClock implements TimerSource {
  t = 0;
  timers = new Map<number, { at: number; fn: () => void }>();
  armed: number[] = []; // the due time of every timer set, in order
  #next = 0;
  now(): number {
    return this.t;
  }
  set(fn: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.timers.set(id, { at: this.t + ms, fn });
    this.armed.push(this.t + ms);
    return id;
  }
  clear(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Moves the clock to `t`, firing due timers in order. */
  advance(to: number): void {
    while (true) {
      const due = [...this.timers].filter(([, v]) => v.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = to;
  }
}

Deno.test("deadlines: one timer for requests that follow each other; each aborts only once due", () => {
  const clock = new HandClock();
  const ds = new Deadlines(clock);
  const a = ds.start(100);
  assert.deepEqual(clock.armed, [100]);
  clock.advance(10);
  a.clear(); // answered
  const b = ds.start(100); // due at 110: the timer armed for 100 serves
  assert.deepEqual(clock.armed, [100], "no new timer for a later deadline");
  clock.advance(100); // the timer fires: nothing due yet, so it re-arms for b
  assert.equal(b.expired, false);
  assert.equal(a.expired, false, "an ended request is never aborted");
  assert.deepEqual(clock.armed, [100, 110]);
  clock.advance(109);
  assert.equal(b.controller.signal.aborted, false);
  clock.advance(110);
  assert.equal(b.expired, true);
  assert.equal((b.controller.signal.reason as DOMException).name, "TimeoutError");
  assert.equal(ds.size, 0);
  assert.equal(clock.timers.size, 0, "nothing left to watch: no timer left");
});

Deno.test("deadlines: bump pushes a deadline back without a new timer; an earlier one re-arms", () => {
  const clock = new HandClock();
  const ds = new Deadlines(clock);
  const stream = ds.start(50);
  clock.advance(40);
  stream.bump(); // a chunk arrived: due at 90
  assert.deepEqual(clock.armed, [50]);
  clock.advance(50);
  assert.equal(stream.expired, false, "pushed back: not due at its first time");
  const quick = ds.start(10); // due at 60, before the timer armed for 90
  assert.deepEqual(clock.armed, [50, 90, 60]);
  clock.advance(60);
  assert.equal(quick.expired, true);
  assert.equal(stream.expired, false);
  clock.advance(89);
  assert.equal(stream.expired, false);
  clock.advance(90);
  assert.equal(stream.expired, true);
});

Deno.test("deadlines: the caller's cancel aborts with its reason; stop forgets everything", () => {
  const clock = new HandClock();
  const ds = new Deadlines(clock);
  const outer = new AbortController();
  const d = ds.start(100, outer.signal);
  outer.abort(new Error("cancelled"));
  assert.equal((d.controller.signal.reason as Error).message, "cancelled");
  assert.equal(d.expired, false);
  const pre = new AbortController();
  pre.abort("before");
  assert.equal(ds.start(100, pre.signal).controller.signal.reason, "before");
  ds.stop();
  assert.equal(ds.size, 0);
  assert.equal(clock.timers.size, 0);
  clock.advance(1000);
  assert.equal(d.expired, false);
});

Deno.test("deadlines: a cleared deadline lets go of the caller's signal (a long run keeps no finished request)", () => {
  const ds = new Deadlines(new HandClock());
  const run = new AbortController();
  const done = ds.start(100, run.signal);
  done.clear();
  const live = ds.start(100, run.signal);
  run.abort(new Error("run cancelled"));
  // the cleared one no longer hears the run's signal; the live one still does
  assert.equal(done.controller.signal.aborted, false);
  assert.equal((live.controller.signal.reason as Error).message, "run cancelled");
  ds.stop();
});

Deno.test("deadlines on the real timers: a deadline aborts no earlier than due, and stop leaves no timer", async () => {
  const ds = new Deadlines();
  const t0 = performance.now();
  const d = ds.start(30);
  // the clock's timer is unref'd (it never keeps a process alive by itself; a fetch in flight
  // does): this stands in for the fetch
  const keepAlive = setTimeout(() => {}, 60_000);
  await new Promise((resolve) => d.controller.signal.addEventListener("abort", resolve, { once: true }));
  clearTimeout(keepAlive);
  assert.ok(performance.now() - t0 >= 29.5, "never early");
  assert.equal(d.expired, true);
  ds.start(60_000); // would keep a timer for a minute
  ds.stop(); // the test's op sanitizer fails it if a timer is left
});
