/**
 * JetStream requests that survive being lost: a KV compare-and-set write that is retried
 * safely when its request goes unanswered (`casWrite`), and a bounded retry for requests that
 * may simply be sent again (`retryLost`: reads, puts by name).
 *
 * Owns telling a lost request from an answer (`isLostRequest`: a timeout, no responders,
 * JetStream not (yet) answering — a server stalled or restarted mid-request; `isCasConflict`:
 * the server refused the expected revision) and the safe retry of a compare-and-set. A request
 * that timed out may still have landed (the server was only slow), so `casWrite` never writes
 * blind a second time: it re-reads the key first and
 * - finds exactly the bytes it wrote: the write landed, success at that revision;
 * - finds the revision it expected (or no value, for a create): nothing landed, it writes again;
 * - finds anything else: a real conflict (another writer moved the key on).
 * A refused compare-and-set is decided by the same read, so a write that landed on an earlier,
 * lost try is recognised when the next try is refused.
 *
 * Invariants: "exactly my bytes" is only sound when every write's value is unique to that write —
 * callers put a fresh write id (or another unique value) in each text they write and reuse the
 * text across the tries of one write; no new try starts once `patienceMs` has passed (a try under
 * way ends within its requests' timeout, the handles' `JETSTREAM_TIMEOUT_MS`, `run_queue.ts`), and
 * the last lost request's error is thrown; any other error (a closed connection, a permission
 * refused, a value too large) is thrown at once.
 */
import type { KV, KvEntry } from "@nats-io/kv";

/** How long a write or read keeps trying across lost requests by default, ms. */
export const LOST_REQUEST_PATIENCE_MS = 30_000;
/** The pause between a lost request and the next try, ms. */
export const LOST_REQUEST_PAUSE_MS = 250;

/** How `casWrite` and `retryLost` retry. */
export interface LostRequestOptions {
  /** Stop trying after this long, ms (default `LOST_REQUEST_PATIENCE_MS`). */
  patienceMs?: number;
  /** The pause before each retry, ms (default `LOST_REQUEST_PAUSE_MS`). */
  pauseMs?: number;
  /**
   * Called with the lost request's error before each retry (`tries` so far); the retry waits for
   * what it returns (a log line, or a test holding the retry at this point).
   */
  onLost?: (error: Error, tries: number) => void | Promise<void>;
}

/** What a compare-and-set write ended as. */
export type CasResult =
  | { ok: true; revision: number }
  /** Another writer holds the key: its entry as last read (`null`: none). */
  | { ok: false; current: KvEntry | null };

/** A compare-and-set refused by the server (`wrong last sequence`, or the key exists on a create). */
export function isCasConflict(e: unknown): boolean {
  return /wrong last sequence|key exists/i.test(`${(e as Error)?.message ?? e}`);
}

/**
 * True for an error that says nothing about whether the request was carried out: no answer in
 * time, nobody answering (JetStream not up yet after a restart), or JetStream answering that it
 * is unavailable (status 503).
 */
export function isLostRequest(e: unknown): boolean {
  for (let err = e as (Error & { status?: unknown; cause?: unknown }) | undefined, i = 0; err && i < 4; i++) {
    const name = `${err.name ?? ""}`;
    if (["TimeoutError", "NoResponders", "JetStreamNotEnabled"].includes(name)) return true;
    if (name === "RequestError" && /timeout|no responders/i.test(`${err.message}`)) return true;
    if (name === "JetStreamApiError" && err.status === 503) return true;
    err = err.cause as typeof err;
  }
  return false;
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Runs `fn` (a request that may be sent again as it is: a read, a put by name), again after each
 * lost request (`isLostRequest`) for up to `patienceMs`.
 * @throws the last lost request's error once patience is spent, any other error at once
 */
export async function retryLost<T>(fn: () => Promise<T>, opts: LostRequestOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.patienceMs ?? LOST_REQUEST_PATIENCE_MS);
  for (let tries = 1;; tries++) {
    try {
      return await fn();
    } catch (e) {
      if (!isLostRequest(e) || Date.now() >= deadline) throw e;
      await opts.onLost?.(e as Error, tries);
      await pause(opts.pauseMs ?? LOST_REQUEST_PAUSE_MS);
    }
  }
}

/**
 * Writes `text` under `key` if the key's revision is still `expected` (0: the key has no value),
 * retried safely across lost requests (see the module doc).
 * @returns the new revision, or the conflict with the entry found
 * @throws the last lost request's error once patience is spent, any other error at once
 */
export async function casWrite(
  kv: KV,
  key: string,
  text: string,
  expected: number,
  opts: LostRequestOptions = {},
): Promise<CasResult> {
  const mine = new TextEncoder().encode(text);
  const deadline = Date.now() + (opts.patienceMs ?? LOST_REQUEST_PATIENCE_MS);
  let check = false; // a try was lost or refused: read before writing again
  let refusals = 0;
  let base = expected; // the revision the write compares against (a create: a delete marker's)
  for (let tries = 1;; tries++) {
    try {
      if (check) {
        const entry = await kv.get(key);
        if (entry?.operation === "PUT" && sameBytes(entry.value, mine)) {
          return { ok: true, revision: entry.revision };
        }
        const untouched = expected === 0
          ? entry === null || entry.operation !== "PUT"
          : entry?.revision === expected;
        // refused although the key reads untouched: only a key moving under us does that; a third
        // time is given up as a conflict
        if (!untouched || refusals >= 3) return { ok: false, current: entry };
        if (expected === 0) base = entry?.revision ?? 0;
        check = false;
      }
      // a plain put with the expected revision: the client's `create` reads after any failure of
      // its put, so a lost create would wait twice
      return { ok: true, revision: await kv.put(key, text, { previousSeq: base }) };
    } catch (e) {
      if (isCasConflict(e)) {
        // refused: a try of ours that was lost may have landed; the read decides
        refusals++;
        check = true;
        continue;
      }
      if (!isLostRequest(e) || Date.now() >= deadline) throw e;
      check = true;
      await opts.onLost?.(e as Error, tries);
      await pause(opts.pauseMs ?? LOST_REQUEST_PAUSE_MS);
    }
  }
}
