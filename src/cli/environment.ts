/**
 * The CLI's edge to the process: the one place its subcommands read the process environment and
 * working directory.
 *
 * Owns `edgeCwd()` (the process working directory: every relative path of the command line is
 * taken from it, explicitly), `edgeProcessEnv()` (the process environment as it is: what the
 * sandbox launcher re-executes the process with) and `edgeEnvironment(project)`: the process environment with `<project>/.env` layered in by
 * the seed's rule (a variable already set wins), plus the `.env` file's warnings, and the process
 * working directory. The record is what the CLI hands a run as `RunSpec.env` (and `cwd`); nothing
 * is written back into the process, so the CLI and an embedder running the same block resolve the
 * same settings from the same inputs.
 *
 * Before it reads a project's `.env`, `edgeEnvironment` does the sweeps a sandbox launcher killed
 * outright left undone on that project (`src/sandbox/sweep_notes.ts` says whether one is owed,
 * at the cost of one `readDir` of the home's notes; the launcher's `sweepLeftovers`, loaded only
 * then, does it): the run that launcher confined may have planted that `.env`, or a repository's
 * hooks, for the next run to load unconfined. Every command that reads `.env` comes here first.
 */
import { join, resolve } from "node:path";
import { layerDotenv, readDotenv } from "../config/dotenv.ts";
import { HOST_CREDENTIALS } from "../proc/child_env.ts";
import { agentBlockHome, sandboxSettingsFromEnv } from "../config/env_settings.ts";
import { leftoverSweep } from "../sandbox/sweep_notes.ts";
import { writeStderr } from "../obs/log.ts";

/** The environment and working directory the CLI resolves for one project. */
export interface EdgeEnvironment {
  /** Process environment with the project's `.env` layered in. */
  env: Record<string, string>;
  /** The process working directory (absolute). */
  cwd: string;
  /** Problems found in `.env`, naming the file and line. */
  warnings: string[];
}

/** The process working directory (absolute). */
export function edgeCwd(): string {
  return Deno.cwd();
}

/** The process environment, as it is (what a re-executed process is started with). */
export function edgeProcessEnv(): Record<string, string> {
  return Deno.env.toObject();
}

/**
 * The environment of a run `agent-block mcp` makes in its own process (a declared block's call):
 * what a child run of `project` would have — this process's environment without the host's
 * credentials (`HOST_CREDENTIALS`), the project's `.env` layered in (its keys are the project's
 * own, as a child loading `.env` itself would get them).
 */
export function edgeEnvironmentWithoutHostCredentials(project: string): Record<string, string> {
  const base = Deno.env.toObject();
  for (const k of HOST_CREDENTIALS) delete base[k];
  const root = resolve(edgeCwd(), project);
  return layerDotenv(base, readDotenv(join(root, ".env"), join(project, ".env")).vars);
}

/**
 * The environment a run of `project` (relative to the process cwd) gets from this process, after
 * the sweeps killed launchers owe on it (see above).
 * @throws AgentBlockError when a sweep is owed and cannot be done (`sweepLeftovers`)
 */
export async function edgeEnvironment(project: string): Promise<EdgeEnvironment> {
  const cwd = edgeCwd();
  const root = resolve(cwd, project);
  const starter = Deno.env.toObject();
  const home = resolve(cwd, agentBlockHome(starter, cwd));
  if (leftoverSweep(home, root)) {
    const { sweepLeftovers } = await import("../sandbox/launcher.ts");
    const enc = new TextEncoder();
    sweepLeftovers(
      sandboxSettingsFromEnv(starter, cwd),
      root,
      (line) => writeStderr(enc.encode(line + "\n")),
    );
  }
  const file = join(root, ".env");
  const dotenv = readDotenv(file, join(project, ".env"));
  return { env: layerDotenv(starter, dotenv.vars), cwd, warnings: dotenv.warnings };
}
