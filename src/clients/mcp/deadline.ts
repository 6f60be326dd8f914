/**
 * A request deadline that can be paused.
 *
 * Owns one rule of the MCP client: time the script's own handlers spend answering a server
 * (a sampling handler calling a model, an elicitation handler asking a person) does not count
 * against the timeout of the request that is waiting on them. Pauses nest; the deadline fires at
 * most once and never after `clear()`.
 */
export class Deadline {
  #remaining: number;
  #startedAt = 0;
  #handle: ReturnType<typeof setTimeout> | undefined;
  #pauses = 0;
  #done = false;

  constructor(ms: number, private readonly onExpire: () => void) {
    this.#remaining = ms;
    this.#arm();
  }

  #arm(): void {
    this.#startedAt = performance.now();
    this.#handle = setTimeout(() => {
      this.#done = true;
      this.#handle = undefined;
      this.onExpire();
    }, Math.max(0, this.#remaining));
  }

  pause(): void {
    if (this.#done || this.#pauses++ > 0 || this.#handle === undefined) return;
    clearTimeout(this.#handle);
    this.#handle = undefined;
    this.#remaining -= performance.now() - this.#startedAt;
  }

  resume(): void {
    if (this.#pauses === 0 || --this.#pauses > 0 || this.#done) return;
    this.#arm();
  }

  clear(): void {
    this.#done = true;
    clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}
