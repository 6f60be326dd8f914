/**
 * The kernel's two settings of a run, read from its environment: the commit window
 * (`AGENT_BLOCK_KNL_COMMIT_MS`) and the busy timeout (`AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`).
 *
 * Layer: host. Owns turning the run's variables into the numbers the kernel takes (`src/knl`
 * reads no environment: its writer is given numbers), with the one duration rule of
 * `src/run_env.ts` (`wholeMilliseconds`: unset or blank is the default, anything but a whole
 * number of ms in bounds is a `RangeError` naming the variable). Read by the kernel's face
 * (`knl.ts`, for its writers) and the model face (`llm/install.ts`: whether a model request may
 * leave the commit to the window).
 */
import { wholeMilliseconds } from "../run_env.ts";
import { COMMIT_WINDOW_ENV, DEFAULT_COMMIT_WINDOW_MS, MAX_COMMIT_WINDOW_MS } from "../knl/commit_window.ts";
import { BUSY_TIMEOUT_ENV, DEFAULT_BUSY_TIMEOUT_MS, MAX_BUSY_TIMEOUT_MS } from "../knl/busy_timeout.ts";

/** A run's environment, as far as these settings go (`RunEnv`, or a `Map` in a test). */
export type SettingsEnv = { get(name: string): string | undefined };

/** The commit window in ms: `AGENT_BLOCK_KNL_COMMIT_MS` (0 to 60000), else the default. */
export function commitWindowMs(env: SettingsEnv): number {
  return wholeMilliseconds(env, COMMIT_WINDOW_ENV, DEFAULT_COMMIT_WINDOW_MS, MAX_COMMIT_WINDOW_MS);
}

/** The busy timeout in ms: `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`, else the default (30 s). */
export function busyTimeoutMs(env: SettingsEnv): number {
  return wholeMilliseconds(env, BUSY_TIMEOUT_ENV, DEFAULT_BUSY_TIMEOUT_MS, MAX_BUSY_TIMEOUT_MS);
}
