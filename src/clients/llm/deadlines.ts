/**
 * Timeouts of the model requests in flight, kept on one timer.
 *
 * Owns the deadlines of a run's requests (each attempt's whole exchange, the answer's stream
 * included): each request holds a `Deadline` whose controller aborts its fetch once it expires.
 * One timer serves them all, armed for the earliest deadline it knows of; a request that starts
 * or is pushed back (`bump`) later than that changes nothing, and a request that ends only leaves
 * the set. When the timer fires it aborts what is due and re-arms for the
 * earliest deadline left, if any.
 *
 * Why: a timer per request cost a measurable share of a model turn; a loop's requests follow each other with the same timeout, so their deadlines
 * only move forward and the armed timer rarely needs to change.
 *
 * Invariants: a deadline fires no earlier than its due time (the timer may fire early for a
 * deadline that was pushed back: it then only re-arms); a cleared deadline holds no listener on
 * the caller's signal (a run of many turns keeps none of its finished requests); `stop()` clears the timer and forgets
 * every deadline (the run's end, so no timer outlives its run); the timer is unref'd, so it never
 * keeps a process alive by itself (an in-flight fetch does).
 */

/** The clock and timer a `Deadlines` runs on (the real ones by default; a test brings its own). */
export interface TimerSource {
  /** Monotonic time in ms. */
  now(): number;
  /** Calls `fn` once, `ms` from now; the handle cancels it. The real one is unref'd. */
  set(fn: () => void, ms: number): unknown;
  /** Cancels a pending `set`. */
  clear(handle: unknown): void;
}

const REAL_TIMERS: TimerSource = {
  now: () => performance.now(),
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    if (typeof t === "number") Deno.unrefTimer(t);
    else (t as { unref?: () => void }).unref?.();
    return t;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One request's deadline: its controller aborts the request when the deadline passes. */
export class Deadline {
  /** Aborted with a `TimeoutError` DOMException when the deadline passes. */
  readonly controller = new AbortController();
  /** True once the deadline passed (the abort came from here, not from the caller). */
  expired = false;
  /** Time it falls due, on the clock's `now()`. */
  due = 0;

  /**
   * A deadline `ms` from now on `clock`, also aborted when `outer` is.
   * @param clock the timer it is kept on
   * @param ms time allowed, in ms (also the length of every `bump`)
   * @param outer the caller's cancel signal, forwarded to `controller`
   */
  constructor(private readonly clock: Deadlines, readonly ms: number, outer?: AbortSignal) {
    if (outer) {
      if (outer.aborted) this.controller.abort(outer.reason);
      else {
        const forward = () => this.controller.abort(outer.reason);
        outer.addEventListener("abort", forward, { once: true });
        // the run's signal lives as long as the run: a listener left on it would keep every
        // request's deadline (and its controller) until the run ends
        this.#unlink = () => outer.removeEventListener("abort", forward);
      }
    }
    this.bump();
  }

  #unlink: (() => void) | undefined;

  /** Pushes the deadline to `ms` from now. */
  bump(): void {
    this.due = this.clock.now() + this.ms;
    this.clock.track(this);
  }

  /** Forgets the deadline (the request is over) and lets go of the caller's signal. */
  clear(): void {
    this.clock.untrack(this);
    this.#unlink?.();
    this.#unlink = undefined;
  }

  /** Called by the clock once the deadline passed. */
  expire(): void {
    this.expired = true;
    this.controller.abort(new DOMException("timeout", "TimeoutError"));
  }
}

/** The deadlines of one run's requests, on one timer. */
export class Deadlines {
  #live = new Set<Deadline>();
  #timer: unknown;
  #armedFor = Infinity;

  /** @param timers the clock and timer to run on (the real ones unless a test brings its own) */
  constructor(private readonly timers: TimerSource = REAL_TIMERS) {}

  /** The clock's current time. */
  now(): number {
    return this.timers.now();
  }

  /** A new deadline `ms` from now, aborted early when `outer` is. */
  start(ms: number, outer?: AbortSignal): Deadline {
    return new Deadline(this, ms, outer);
  }

  /** Number of deadlines being watched. */
  get size(): number {
    return this.#live.size;
  }

  /** Watches `d` (again, after a bump); arms the timer earlier when `d` is due first. */
  track(d: Deadline): void {
    this.#live.add(d);
    if (d.due < this.#armedFor) this.#arm(d.due);
  }

  /** Stops watching `d`. The timer stays armed: it re-arms or stops when it fires. */
  untrack(d: Deadline): void {
    this.#live.delete(d);
  }

  /** Clears the timer and forgets every deadline. */
  stop(): void {
    if (this.#timer !== undefined) this.timers.clear(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    this.#live.clear();
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) this.timers.clear(this.#timer);
    this.#armedFor = at;
    this.#timer = this.timers.set(() => this.#fire(), Math.max(0, at - this.timers.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.timers.now();
    let next = Infinity;
    for (const d of [...this.#live]) {
      if (d.due <= now) {
        this.#live.delete(d);
        d.expire();
      } else if (d.due < next) {
        next = d.due;
      }
    }
    if (next < Infinity) this.#arm(next);
  }
}
