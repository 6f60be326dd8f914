/**
 * The kernel's commit window: how long a deferred event may wait for its commit when nothing
 * else commits it first.
 *
 * Owns reading `AGENT_BLOCK_KNL_COMMIT_MS` (default 5) from a run's environment. The rule it feeds (see the durability
 * note of `embedded/knl/init.lua`): deferred events always commit before the run next acts on the
 * world; a model request is not such an act — asking again is harmless — so with a window above
 * zero the events before a request commit while it is in flight, at the latest this many ms
 * after the first of them was appended, and beats that follow each other faster than that share
 * one commit. `0` restores the strict rule: everything is committed before a request starts.
 * It is the run's, never the process's: a run's writer (`writer.ts`) takes the window of its
 * run's environment when the run first opens a store, and the LLM host reads it when a run
 * installs it; two runs of one process may use different windows over one database.
 *
 * Why a module of its own: the event store (timer) and the LLM host (whether a request waits for
 * the commit) both read it, and the LLM host must not load SQLite to do so.
 */

/**
 * What the kernel reads settings from: a run's `RunEnv`, or anything with its `get` (a `Map` in
 * a test). Structural, so the kernel imports nothing outside `src/knl`.
 */
export type KnlEnv = { get(name: string): string | undefined };

/** Name of the environment variable that sets the window. */
export const COMMIT_WINDOW_ENV = "AGENT_BLOCK_KNL_COMMIT_MS";

/** Default window, in ms: short beside any real model call, long beside an instant one. */
export const DEFAULT_COMMIT_WINDOW_MS = 5;

/** Longest window accepted, in ms. */
export const MAX_COMMIT_WINDOW_MS = 60_000;

/**
 * A whole number of milliseconds from 0 to `max` in `env`'s variable `name`, or `fallback` when
 * it is unset or blank. Throws a `RangeError` naming the variable and the value for anything else:
 * a mistyped setting is an error, never silently the default. (The kernel's own copy of the rule
 * `src/run_env.ts` states for the other layers: the kernel imports nothing outside `src/knl`.)
 */
export function wholeMilliseconds(env: KnlEnv, name: string, fallback: number, max: number): number {
  const raw = env.get(name);
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new RangeError(`${name} must be a whole number of milliseconds from 0 to ${max}, got '${raw}'`);
  }
  return n;
}

/**
 * The window in ms, from `env`'s `AGENT_BLOCK_KNL_COMMIT_MS` (a whole number, 0 to 60000) or the
 * default. Throws naming the variable when it is set to anything else.
 */
export function commitWindowMs(env: KnlEnv): number {
  return wholeMilliseconds(env, COMMIT_WINDOW_ENV, DEFAULT_COMMIT_WINDOW_MS, MAX_COMMIT_WINDOW_MS);
}
