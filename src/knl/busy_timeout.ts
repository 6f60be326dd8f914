/**
 * The kernel's busy timeout: how long a commit or read waits for another connection's lock
 * (another process appending to the same file) before it fails.
 *
 * Owns the setting `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`: its name, default 30 s and bound (a run's
 * value is read from its environment by `src/host/knl_settings.ts`: anything but a whole number
 * of ms from 0 to `MAX_BUSY_TIMEOUT_MS` is an error naming the variable). The value
 * belongs to the run: a run's writer puts it in force on the shared connection for its own
 * commits and reads (see `EventWriter`), so two runs of one process with different timeouts each
 * wait as long as they asked.
 */
/** Name of the environment variable that sets the timeout. */
export const BUSY_TIMEOUT_ENV = "AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS";

/** Default busy timeout, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;

/** Longest busy timeout accepted, in ms (SQLite takes a 32-bit count). */
export const MAX_BUSY_TIMEOUT_MS = 2_147_483_647;
