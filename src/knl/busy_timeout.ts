/**
 * The kernel's busy timeout: how long a commit or read waits for another connection's lock
 * (another process appending to the same file) before it fails.
 *
 * Owns the timeout's default (30 s) and bound (the edge parses a run's
 * `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS` into `RunSettings.knlBusyTimeoutMs`,
 * `src/config/env_settings.ts`: anything but a whole number of ms from 0 to `MAX_BUSY_TIMEOUT_MS`
 * is an error naming the variable). The value
 * belongs to the run: a run's writer puts it in force on the shared connection for its own
 * commits and reads (see `EventWriter`), so two runs of one process with different timeouts each
 * wait as long as they asked.
 */
/** Default busy timeout, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;

/** Longest busy timeout accepted, in ms (SQLite takes a 32-bit count). */
export const MAX_BUSY_TIMEOUT_MS = 2_147_483_647;
