/**
 * A timer for any duration (bottom layer: imports nothing of ours).
 *
 * Owns `longTimeout`: `setTimeout` for delays past the host timer's range. A JavaScript timer
 * holds a signed 32-bit count of milliseconds (at most 2^31 - 1, about 24.8 days); a larger delay
 * overflows and fires after about one millisecond — a `timeout = "30d"` job would have been ended
 * at once. Here a long delay is a chain of in-range timers, each re-armed with what is left.
 *
 * Invariants: `fn` runs once, no earlier than `ms` after the call (by `Date.now()`), unless
 * `clear` was called first; a delay that is not a finite number is refused (`RangeError`), not
 * taken for zero.
 */

/** The largest delay one host timer holds, ms (2^31 - 1). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A pending `longTimeout`. */
export interface LongTimer {
  /** Cancels it (idempotent; after it fired, a no-op). */
  clear(): void;
}

/**
 * Runs `fn` once after `ms` milliseconds, however long (see the module doc).
 *
 * @example
 * ```ts
 * import { longTimeout } from "./long_timer.ts";
 * const t = longTimeout(() => console.log("a month later"), 30 * 24 * 3600 * 1000);
 * t.clear();
 * ```
 */
export function longTimeout(fn: () => void, ms: number): LongTimer {
  if (!Number.isFinite(ms)) throw new RangeError(`a timer's delay must be a finite number, got ${ms}`);
  const due = Date.now() + Math.max(0, ms);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let cleared = false;
  const arm = (left: number) => {
    timer = setTimeout(() => {
      const rest = due - Date.now();
      if (rest > 0) arm(rest);
      else if (!cleared) fn();
    }, Math.min(left, MAX_TIMER_MS));
  };
  arm(Math.max(0, ms));
  return {
    clear() {
      cleared = true;
      clearTimeout(timer);
    },
  };
}
