/**
 * The 2025-era sessions of `agent-block mcp --http`: a bounded table that abandoned sessions
 * cannot fill for good.
 *
 * Owns the table's rules:
 * - at most `max` sessions; a new client always gets one: when the table is full, the session
 *   idle longest is closed to make room (one holding only an open event stream counts as idle,
 *   after those holding nothing; one with a call in flight is never closed for room — if every
 *   session has one, the new client is refused, and the calls end with their runs);
 * - a session with no request in flight and no open stream for `idleMs` is closed by `sweep()`
 *   (the server runs it periodically), so a client that went away without `DELETE` does not keep
 *   its session, its server instance and its slot;
 * - "in flight" is from the moment a request of the session arrives until its response body is
 *   done (`track` wraps it): a `tools/call` answered over a stream stays in flight while it runs.
 *
 * Why: a client that never sends `DELETE` (crashed, killed, or hostile) used to keep its slot
 * forever, and `max` of them locked every new client out with 503 until the server restarted.
 *
 * Invariants: `close` is called once per session the table drops (expired, evicted; not for
 * `delete`, which is the caller's own removal); the clock is injectable, so the rules are tested
 * without waiting.
 */

/** What the table is given. */
export interface SessionTableOptions<S> {
  /** Most sessions open at once. */
  max: number;
  /** Idle time after which a session is closed, ms. */
  idleMs: number;
  /** Closes a dropped session (its server and transport); `why` says why, for the log. */
  close: (session: S, id: string, why: string) => void;
  /** Monotonic clock in ms (default `performance.now`). */
  now?: () => number;
}

interface Entry<S> {
  session: S;
  /** Last time a request arrived or finished. */
  active: number;
  /** Requests in flight other than event streams (POST, DELETE). */
  calls: number;
  /** Open event streams (GET). */
  streams: number;
}

/** The sessions, by id. */
export class SessionTable<S> {
  readonly #entries = new Map<string, Entry<S>>();
  readonly #now: () => number;

  constructor(private readonly opts: SessionTableOptions<S>) {
    this.#now = opts.now ?? (() => performance.now());
  }

  get size(): number {
    return this.#entries.size;
  }

  get(id: string): S | undefined {
    return this.#entries.get(id)?.session;
  }

  /** Every session (for shutdown). */
  values(): S[] {
    return [...this.#entries.values()].map((e) => e.session);
  }

  add(id: string, session: S): void {
    this.#entries.set(id, { session, active: this.#now(), calls: 0, streams: 0 });
  }

  /** Forgets `id` (closed by its client or its transport); `close` is not called. */
  delete(id: string): void {
    this.#entries.delete(id);
  }

  /** Forgets every session (shutdown). */
  clear(): void {
    this.#entries.clear();
  }

  /** A request of `id` arrived; the answer is called once it is done (a no-op for an unknown id). */
  begin(id: string, kind: "call" | "stream"): () => void {
    const e = this.#entries.get(id);
    if (!e) return () => {};
    e.active = this.#now();
    if (kind === "call") e.calls++;
    else e.streams++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (kind === "call") e.calls--;
      else e.streams--;
      e.active = this.#now();
    };
  }

  /**
   * Makes room for one more session: true when there is room (after evicting the session idle
   * longest if the table was full), false when every session has a call in flight.
   */
  makeRoom(): boolean {
    if (this.#entries.size < this.opts.max) return true;
    // Holding nothing goes before holding only an open stream; then the one idle longest.
    const first = (a: Entry<S>, b: Entry<S>) =>
      (a.streams > 0) !== (b.streams > 0) ? a.streams === 0 : a.active < b.active;
    let victim: [string, Entry<S>] | undefined;
    for (const item of this.#entries) {
      if (item[1].calls > 0) continue;
      if (!victim || first(item[1], victim[1])) victim = item;
    }
    if (!victim) return false;
    const [id, e] = victim;
    this.#entries.delete(id);
    const idle = Math.round((this.#now() - e.active) / 1000);
    this.opts.close(e.session, id, `evicted for a new client (the table was full; idle ${idle} s)`);
    return true;
  }

  /** Closes the sessions idle for `idleMs` or more; returns how many. */
  sweep(): number {
    const now = this.#now();
    let n = 0;
    for (const [id, e] of [...this.#entries]) {
      if (e.calls > 0 || e.streams > 0 || now - e.active < this.opts.idleMs) continue;
      this.#entries.delete(id);
      n++;
      this.opts.close(e.session, id, `expired after ${Math.round((now - e.active) / 1000)} s idle`);
    }
    return n;
  }
}

/** `res` with a body that calls `done` once it is finished, failed or cancelled (or at once without one). */
export function track(res: Response, done: () => void): Response {
  if (!res.body) {
    done();
    return res;
  }
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const r = await reader.read();
        if (r.done) {
          done();
          c.close();
        } else c.enqueue(r.value);
      } catch (e) {
        done();
        c.error(e);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
