/**
 * The kernel's commit window: how long a deferred event may wait for its commit when nothing
 * else commits it first.
 *
 * Owns the window's default (5) and bound (the kernel takes the number: the edge parses a run's
 * `AGENT_BLOCK_KNL_COMMIT_MS` into `RunSettings.knlCommitMs`, `src/config/env_settings.ts`, with
 * the one duration rule of `src/run_env.ts`). The rule it feeds (see the durability
 * note of `embedded/knl/init.lua`): deferred events always commit before the run next acts on the
 * world; a model request is not such an act — asking again is harmless — so with a window above
 * zero the events before a request commit while it is in flight, at the latest this many ms
 * after the first of them was appended, and beats that follow each other faster than that share
 * one commit. `0` restores the strict rule: everything is committed before a request starts.
 * It is the run's, never the process's: a run's writer (`writer.ts`) is given the window of its
 * run when the run first opens a store, and the LLM host reads it when a run installs it; two
 * runs of one process may use different windows over one database.
 *
 * Why a module of its own: the event store (timer) and the LLM host (whether a request waits for
 * the commit) both need the constants, and the LLM host must not load SQLite to do so.
 */

/** Default window, in ms: short beside any real model call, long beside an instant one. */
export const DEFAULT_COMMIT_WINDOW_MS = 5;

/** Longest window accepted, in ms. */
export const MAX_COMMIT_WINDOW_MS = 60_000;
