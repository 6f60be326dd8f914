/**
 * The kernel's busy timeout: how long a commit or read waits for another connection's lock
 * (another process appending to the same file) before it fails.
 *
 * Owns reading `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS` from a run's environment (default 30 s; a value
 * that is not a whole number of ms, 0 or more, leaves the default, as it always did). The value
 * belongs to the run: a run's writer puts it in force on the shared connection for its own
 * commits and reads (see `EventWriter`), so two runs of one process with different timeouts each
 * wait as long as they asked.
 */
import type { KnlEnv } from "./commit_window.ts";

/** Name of the environment variable that sets the timeout. */
export const BUSY_TIMEOUT_ENV = "AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS";

/** Default busy timeout, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;

/** The busy timeout in ms from `env`'s `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`, or the default. */
export function busyTimeoutMs(env: KnlEnv): number {
  const raw = env.get(BUSY_TIMEOUT_ENV);
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_BUSY_TIMEOUT_MS;
}
