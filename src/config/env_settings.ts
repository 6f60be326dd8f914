/**
 * The edge's reading of a run environment's `AGENT_BLOCK_*` variables into `RunSettings`
 * (`src/run_settings.ts`).
 *
 * Layer: config, imported only by the edge (`src/cli/**`, `mod.ts`, `unstable_flows.ts`: the
 * layering test holds it), which calls `settingsFromEnv` once per run, on the environment it
 * resolved for that run, and hands the result down typed. This is the one module that knows the
 * variables: their names, spellings, bounds and the messages that name them. Below the edge
 * nothing parses them (tests/arch/env_settings_test.ts).
 *
 * Variables and rules:
 * - `AGENT_BLOCK_LOG`: `debug`, `info`, `warn` (`warning`), `error`, `off`, any case; unset or
 *   empty is info; anything else is info with a warning naming the value (written by the run's
 *   logger when it starts, as before);
 * - `AGENT_BLOCK_UNSEAL`: exactly `1` downgrades the seal check;
 * - `AGENT_BLOCK_TASK_GRACE_MS`: a whole number of ms (`wholeMilliseconds`).
 *
 * Errors: a numeric variable that is set but malformed throws the `RangeError` of
 * `wholeMilliseconds` (naming the variable and the value); a runner turns it into a run that
 * never started (`raised`, code `config`, exit 1).
 */
import { wholeMilliseconds } from "../run_env.ts";
import type { RunSettings, SettingsLogLevel } from "../run_settings.ts";

/** A run environment: a plain record, or anything with `get` (a `RunEnv`, a `Map` in a test). */
export type EnvSource = Readonly<Record<string, string>> | { get(name: string): string | undefined };

function view(env: EnvSource): { get(name: string): string | undefined } {
  if (typeof (env as { get?: unknown }).get === "function") {
    return env as { get(name: string): string | undefined };
  }
  const rec = env as Readonly<Record<string, string>>;
  return { get: (name) => (Object.hasOwn(rec, name) ? rec[name] : undefined) };
}

const LEVELS: readonly SettingsLogLevel[] = ["debug", "info", "warn", "error", "off"];

/**
 * The log threshold `env`'s `AGENT_BLOCK_LOG` asks for (`undefined`: info), and the warning a
 * value that names no level gets. For an edge's own logger (`agent-block mcp`, `a2a serve`) too.
 */
export function logLevelFromEnv(env: EnvSource): { level?: SettingsLogLevel; warnings: string[] } {
  const raw = view(env).get("AGENT_BLOCK_LOG");
  if (raw === undefined || raw === "") return { warnings: [] };
  let v = raw.trim().toLowerCase();
  if (v === "warning") v = "warn";
  if ((LEVELS as readonly string[]).includes(v)) return { level: v as SettingsLogLevel, warnings: [] };
  return {
    warnings: [`AGENT_BLOCK_LOG must be one of debug, info, warn, error, off; got '${raw}' (using info)`],
  };
}

/**
 * The settings `env` asks for. Reads only `AGENT_BLOCK_*` variables.
 * @throws RangeError naming the variable and the value, for a malformed number
 */
export function settingsFromEnv(env: EnvSource): RunSettings {
  const e = view(env);
  const out: RunSettings = {};
  const warnings: string[] = [];

  const log = logLevelFromEnv(e);
  if (log.level !== undefined) out.logLevel = log.level;
  warnings.push(...log.warnings);
  if (e.get("AGENT_BLOCK_UNSEAL") === "1") out.unseal = true;
  if (nonBlank(e.get("AGENT_BLOCK_TASK_GRACE_MS"))) {
    out.taskGraceMs = wholeMilliseconds(e, "AGENT_BLOCK_TASK_GRACE_MS", 1000);
  }
  if (warnings.length) out.warnings = warnings;
  return out;
}

function nonBlank(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== "";
}
