/**
 * A bound on how many lines one kind of repeated warning writes.
 *
 * Owns `RepeatLimit`: the first `burst` warnings of a window of `windowMs` are written as they
 * come; the rest are counted, and one summary line says how many there were and the last of
 * them — written with the first warning after the window, or by `flush()` (a run's end). A flood
 * (30 000 forged mesh messages) costs a few lines instead of one line each, and no count is lost.
 *
 * Invariants: every reported warning is either written or counted in exactly one summary; no
 * timer is armed (nothing here keeps a process alive or writes after its owner ended).
 */

/** Limits one kind of repeated warning (see the module doc). */
export class RepeatLimit {
  #windowStart = -Infinity;
  #inWindow = 0;
  #suppressed = 0;
  #last = "";
  #since = 0;

  /**
   * @param write where lines go (the run's `log.warn`)
   * @param what the summary's noun, e.g. "mesh: dropped messages"
   * @param burst lines written per window (default 10)
   * @param windowMs the window (default 10 s)
   * @param now the clock (tests)
   */
  constructor(
    private readonly write: (line: string) => void,
    private readonly what: string,
    private readonly burst = 10,
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes `line`, or counts it when this window's burst is spent. */
  report(line: string): void {
    const t = this.now();
    if (t - this.#windowStart >= this.windowMs) {
      this.flush();
      this.#windowStart = t;
      this.#inWindow = 0;
    }
    if (++this.#inWindow <= this.burst) {
      this.write(line);
      return;
    }
    if (this.#suppressed === 0) this.#since = t;
    this.#suppressed++;
    this.#last = line;
  }

  /** Writes the summary of what was counted and not written, if anything was. */
  flush(): void {
    if (this.#suppressed === 0) return;
    const secs = Math.max(0, Math.round((this.now() - this.#since) / 1000));
    this.write(
      `${this.what}: ${this.#suppressed} more not shown (in ${secs} s; the last: ${this.#last})`,
    );
    this.#suppressed = 0;
    this.#last = "";
  }
}
