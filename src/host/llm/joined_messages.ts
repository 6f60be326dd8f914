/**
 * One conversation's wire messages as the bytes of a JSON array's inside (`m1,m2,...`), kept
 * between requests: a turn drops what changed at the end and appends what it added, and a request
 * copies the whole in one piece.
 *
 * Owns the buffer, the byte offset where each message ends, and the rule that keeps a request's
 * view valid: a view (`view()`) covers bytes that are never written again while it is in use.
 * Appending writes past every view; dropping messages (`update` with `keep` below the count)
 * overwrites in place only when no view is in use (`release()` after each), else it continues in
 * a fresh buffer. Growth moves to a larger buffer (views keep the old one).
 *
 * Why: built per request from one chunk per message, the body cost a JavaScript loop over the
 * whole history every turn; kept joined, a turn costs its own messages plus one memory copy.
 */

const COMMA = 0x2c;

/** A conversation's joined wire messages (see the module doc). */
export class JoinedMessages {
  #buf = new Uint8Array(0);
  #len = 0;
  /** Byte offset where message i ends (its trailing comma excluded). */
  #ends: number[] = [];
  #views = 0;

  /** Number of messages held. */
  get count(): number {
    return this.#ends.length;
  }

  /**
   * Keeps the first `keep` messages and appends `added` (each one message's UTF-8 JSON).
   * Throws a RangeError when `keep` is more than the count.
   */
  update(keep: number, added: readonly Uint8Array[]): void {
    if (!Number.isInteger(keep) || keep < 0 || keep > this.#ends.length) {
      throw new RangeError(`cannot keep ${keep} of ${this.#ends.length} messages`);
    }
    const from = keep === 0 ? 0 : this.#ends[keep - 1];
    let need = from + added.length - (keep === 0 && added.length > 0 ? 1 : 0); // the commas
    for (const bytes of added) need += bytes.length;
    if (need > this.#buf.length || (from < this.#len && this.#views > 0)) {
      const next = new Uint8Array(Math.max(need, Math.ceil(this.#buf.length * 1.5), 1024));
      next.set(this.#buf.subarray(0, from));
      this.#buf = next;
      this.#views = 0; // the views in use are of the old buffer
    }
    this.#ends.length = keep;
    let at = from;
    for (const bytes of added) {
      if (this.#ends.length > 0) this.#buf[at++] = COMMA;
      this.#buf.set(bytes, at);
      at += bytes.length;
      this.#ends.push(at);
    }
    this.#len = at;
  }

  /** The joined bytes as they are now; call `release()` once the request is done with them. */
  view(): Uint8Array {
    this.#views++;
    return this.#buf.subarray(0, this.#len);
  }

  /** Ends the use of a view from `view()` of the current buffer. */
  release(view: Uint8Array): void {
    if (view.buffer === this.#buf.buffer && this.#views > 0) this.#views--;
  }
}
