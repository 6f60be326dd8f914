/**
 * A run's wall-clock limit: one signal that aborts when the caller's signal does or when the
 * limit passes, and a record of which of the two it was.
 *
 * Layer: runner. Owns the in-process runner's rule (`InProcessRunner`, through which the SDK's
 * `runConfig` runs too): a run the limit ended is `timed_out`, not `cancelled`, whatever the block reported while being
 * ended. The child runner has its own (it kills a process, see `child.ts`).
 */
import type { Outcome } from "../outcome.ts";
import { longTimeout, type LongTimer } from "../util/long_timer.ts";

/** The combined signal of a run and its limit. */
export class WallClock {
  /** Aborts when the caller's signal aborts or the limit passes. */
  readonly signal: AbortSignal;
  #timedOut = false;
  #timer: LongTimer | undefined;

  /**
   * @param timeoutMs the limit (none when undefined)
   * @param signal the caller's own cancel signal
   */
  constructor(readonly timeoutMs: number | undefined, signal: AbortSignal | undefined) {
    const limit = new AbortController();
    if (timeoutMs !== undefined) {
      // any length: a limit past the host timer's range is a chain of timers
      this.#timer = longTimeout(() => {
        this.#timedOut = true;
        limit.abort(`ran past its timeout of ${timeoutMs / 1000} s`);
      }, timeoutMs);
    }
    this.signal = signal ? AbortSignal.any([signal, limit.signal]) : limit.signal;
  }

  /** `outcome`, or `timed_out` when the limit is what cancelled the run. */
  judge(outcome: Outcome): Outcome {
    return this.#timedOut && outcome.status === "cancelled"
      ? { status: "timed_out", seconds: this.timeoutMs! / 1000 }
      : outcome;
  }

  /** Stops the timer (call when the run has ended). */
  clear(): void {
    this.#timer?.clear();
  }
}
