// src/host/llm/errors.ts
var LlmError = class extends Error {
  retryable;
  status;
  retryAfterMs;
  constructor(message, retryable = false, status = 0, retryAfterMs) {
    super(message), this.retryable = retryable, this.status = status, this.retryAfterMs = retryAfterMs;
    this.name = "LlmError";
  }
};

// src/host/llm/deadlines.ts
var REAL_TIMERS = {
  now: () => performance.now(),
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    if (typeof t === "number") Deno.unrefTimer(t);
    else t.unref?.();
    return t;
  },
  clear: (handle) => clearTimeout(handle)
};
var Deadline = class {
  clock;
  ms;
  /** Aborted with a `TimeoutError` DOMException when the deadline passes. */
  controller;
  /** True once the deadline passed (the abort came from here, not from the caller). */
  expired;
  /** Time it falls due, on the clock's `now()`. */
  due;
  /**
   * A deadline `ms` from now on `clock`, also aborted when `outer` is.
   * @param clock the timer it is kept on
   * @param ms time allowed, in ms (also the length of every `bump`)
   * @param outer the caller's cancel signal, forwarded to `controller`
   */
  constructor(clock, ms, outer) {
    this.clock = clock;
    this.ms = ms;
    this.controller = new AbortController();
    this.expired = false;
    this.due = 0;
    if (outer) {
      if (outer.aborted) this.controller.abort(outer.reason);
      else outer.addEventListener("abort", () => this.controller.abort(outer.reason), {
        once: true
      });
    }
    this.bump();
  }
  /** Pushes the deadline to `ms` from now. */
  bump() {
    this.due = this.clock.now() + this.ms;
    this.clock.track(this);
  }
  /** Forgets the deadline (the request is over). */
  clear() {
    this.clock.untrack(this);
  }
  /** Called by the clock once the deadline passed. */
  expire() {
    this.expired = true;
    this.controller.abort(new DOMException("timeout", "TimeoutError"));
  }
};
var Deadlines = class {
  timers;
  #live;
  #timer;
  #armedFor;
  /** @param timers the clock and timer to run on (the real ones unless a test brings its own) */
  constructor(timers = REAL_TIMERS) {
    this.timers = timers;
    this.#live = /* @__PURE__ */ new Set();
    this.#armedFor = Infinity;
  }
  /** The clock's current time. */
  now() {
    return this.timers.now();
  }
  /** A new deadline `ms` from now, aborted early when `outer` is. */
  start(ms, outer) {
    return new Deadline(this, ms, outer);
  }
  /** Number of deadlines being watched. */
  get size() {
    return this.#live.size;
  }
  /** Watches `d` (again, after a bump); arms the timer earlier when `d` is due first. */
  track(d) {
    this.#live.add(d);
    if (d.due < this.#armedFor) this.#arm(d.due);
  }
  /** Stops watching `d`. The timer stays armed: it re-arms or stops when it fires. */
  untrack(d) {
    this.#live.delete(d);
  }
  /** Clears the timer and forgets every deadline. */
  stop() {
    if (this.#timer !== void 0) this.timers.clear(this.#timer);
    this.#timer = void 0;
    this.#armedFor = Infinity;
    this.#live.clear();
  }
  #arm(at) {
    if (this.#timer !== void 0) this.timers.clear(this.#timer);
    this.#armedFor = at;
    this.#timer = this.timers.set(() => this.#fire(), Math.max(0, at - this.timers.now()));
  }
  #fire() {
    this.#timer = void 0;
    this.#armedFor = Infinity;
    const now = this.timers.now();
    let next = Infinity;
    for (const d of [
      ...this.#live
    ]) {
      if (d.due <= now) {
        this.#live.delete(d);
        d.expire();
      } else if (d.due < next) {
        next = d.due;
      }
    }
    if (next < Infinity) this.#arm(next);
  }
};

export {
  LlmError,
  Deadlines
};
