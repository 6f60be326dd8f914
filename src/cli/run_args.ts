/**
 * The run path's command line: its flags parsed and layered over the `--config` file and the
 * environment (`src/config/settings.ts`), with the project's `.env` loaded through the edge
 * (`environment.ts`).
 *
 * Its own module, with light imports only, because two callers need it: the run command, and
 * the sandbox's early launch (`sandbox_launch.ts`), which decides before the runtime's modules are
 * loaded whether the process re-executes itself confined.
 */
import { resolve } from "node:path";
import { parseFlags } from "./args.ts";
import { readRunConfig, type RunConfig } from "../config/run_config.ts";
import { type LayeredRunSettings, resolveRunSettings, runFlags } from "../config/settings.ts";
import { edgeEnvironment } from "./environment.ts";
import { writeStderr } from "../obs/log.ts";

/** Fully layered settings of one run, with the environment and working directory it gets. */
export interface RunSettings extends LayeredRunSettings {
  /** The run's environment: the process's with the project's `.env` layered in. */
  env: Record<string, string>;
  /** The process working directory. */
  cwd: string;
  /** `--sandbox` was given. */
  sandbox: boolean;
  /** `--sandbox-net MODE` (`open`, `off`, `allow-list`), when given: checked by the launcher. */
  sandboxNet?: string;
  /** The project's `.env` file's warnings. */
  warnings: string[];
}

/** Writes `.env` warnings to stderr. */
export function sayWarnings(warnings: readonly string[]): void {
  for (const w of warnings) writeStderr(new TextEncoder().encode(`[warn] agent-block: ${w}\n`));
}

/**
 * Parses run flags and layers them over the config file and the environment (`settings.ts`).
 * @param quiet leave the `.env` file's warnings unsaid (they are in the answer's `warnings`): a
 *   process that may re-execute itself as the sandbox's runtime says them once, in one of the two
 */
export function parseRunArgs(argv: string[], quiet = false): RunSettings | "help" | "version" {
  const parsed = parseFlags(argv, {
    script: { type: "string", short: "s" },
    block: { type: "string", short: "b" },
    project: { type: "string", short: "p" },
    prompt: { type: "string" },
    context: { type: "string", short: "c" },
    config: { type: "string" },
    result: { type: "string" },
    outcome: { type: "string" },
    label: { type: "string", multiple: true },
    "cpu-limit": { type: "string" },
    "memory-limit": { type: "string" },
    "mcp-timeout-secs": { type: "string" },
    progress: { type: "boolean" },
    events: { type: "string" },
    relay: { type: "string" },
    "secret-key": { type: "string" },
    sandbox: { type: "boolean" },
    "sandbox-net": { type: "string" },
    version: { type: "boolean", short: "V" },
    help: { type: "boolean", short: "h" },
  });
  if (parsed.values.help) return "help";
  if (parsed.values.version) return "version";
  const flags = runFlags(parsed.values);
  const project = flags.project ?? ".";
  // .env is the host half's config: layered in before the environment layer is read.
  const edge = edgeEnvironment(project);
  if (!quiet) sayWarnings(edge.warnings);
  const cfg: RunConfig = flags.config !== undefined
    ? readRunConfig(resolve(edge.cwd, flags.config), flags.config)
    : {};
  return {
    ...resolveRunSettings(flags, edge.env, cfg),
    env: edge.env,
    cwd: edge.cwd,
    sandbox: parsed.values.sandbox === true,
    sandboxNet: parsed.values["sandbox-net"] as string | undefined,
    warnings: edge.warnings,
  };
}
