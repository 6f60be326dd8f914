/**
 * The kernel's busy timeout: how long a commit or read waits for another connection's lock
 * (another process appending to the same file) before it fails.
 *
 * Owns reading `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS` from a run's environment (default 30 s; anything
 * but a whole number of ms from 0 to `MAX_BUSY_TIMEOUT_MS` is an error naming the variable). The value
 * belongs to the run: a run's writer puts it in force on the shared connection for its own
 * commits and reads (see `EventWriter`), so two runs of one process with different timeouts each
 * wait as long as they asked.
 */
import { type KnlEnv, wholeMilliseconds } from "./commit_window.ts";

/** Name of the environment variable that sets the timeout. */
export const BUSY_TIMEOUT_ENV = "AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS";

/** Default busy timeout, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;

/** Longest busy timeout accepted, in ms (SQLite takes a 32-bit count). */
export const MAX_BUSY_TIMEOUT_MS = 2_147_483_647;

/** The busy timeout in ms from `env`'s `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`, or the default. */
export function busyTimeoutMs(env: KnlEnv): number {
  return wholeMilliseconds(env, BUSY_TIMEOUT_ENV, DEFAULT_BUSY_TIMEOUT_MS, MAX_BUSY_TIMEOUT_MS);
}
