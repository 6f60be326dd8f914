/**
 * The run path's command line: its flags parsed and layered over the `--config` file and the
 * environment (`src/config/settings.ts`), with the project's `.env` loaded through the edge
 * (`environment.ts`).
 *
 * The working-directory rule (the same for every front end): the command line's own paths
 * (`-s`, `-p`, `--config`, `--result`, `--outcome`, `--events`, `--nats-*` and the config's
 * `nats_*` files) are the caller's and resolve
 * against the process working directory; the run itself works in the project root unless
 * `--cwd DIR` names another directory (`runCwd`), as the MCP server, `serve` and the SDK do.
 *
 * Its own module, with light imports only, because two callers need it: the run command, and
 * the sandbox's early launch (`sandbox_launch.ts`), which decides before the runtime's modules are
 * loaded whether the process re-executes itself confined. Whether a run asked for the sandbox
 * (`sandboxWanted`) is decided here too, so the run command loads the launch only for a run that
 * did.
 */
import { resolve } from "node:path";
import { parseFlags } from "./args.ts";
import { AgentBlockError, UsageError } from "../errors.ts";
import type { RunConfig } from "../config/run_config.ts";
import { type LayeredRunSettings, NATS_CREDENTIALS, runFlags } from "../config/settings.ts";
import { NATS_CREDENTIAL_VARIABLES, resolveRunSettings, sandboxRequested } from "../config/env_settings.ts";
import { edgeCwd, edgeEnvironment } from "./environment.ts";
import { writeStderr } from "../obs/log.ts";
import type { RunRequest } from "../runner/runner.ts";

/** Fully layered settings of one run, with the environment and working directory it gets. */
export interface RunSettings extends LayeredRunSettings {
  /** The run's environment: the process's with the project's `.env` layered in. */
  env: Record<string, string>;
  /** The process working directory: the command line's relative paths resolve against it. */
  cwd: string;
  /** The project root, absolute (`--project` against `cwd`). */
  projectRoot: string;
  /** The run's working directory, absolute: `--cwd` against `cwd`, else the project root. */
  runCwd: string;
  /** `--sandbox` was given. */
  sandbox: boolean;
  /** `--sandbox-net MODE` (`open`, `off`, `allow-list`), when given: checked by the launcher. */
  sandboxNet?: string;
  /** The project's `.env` file's warnings. */
  warnings: string[];
  /**
   * `--request FILE`: the whole run, as a runner sent it (`src/runner/request_json.ts`); its
   * environment is replaced by `env` (the process's, which the runner set, with `.env` layered in).
   */
  request?: RunRequest;
}

/** True when the run asked for the sandbox: `--sandbox`, or `AGENT_BLOCK_SANDBOX` in its environment. */
export function sandboxWanted(s: RunSettings): boolean {
  return s.sandbox || sandboxRequested(s.env.AGENT_BLOCK_SANDBOX);
}

/** The flags that say what one run is: a request file says all of it, so none may stand beside it. */
const REQUEST_EXCLUDES = [
  "script",
  "block",
  "project",
  "prompt",
  "context",
  "config",
  "label",
  "cpu-limit",
  "memory-limit",
  "mcp-timeout-secs",
  "relay",
  "secret-key",
  "nats-creds",
  "nats-nkey",
  "nats-token-file",
  "nats-tls-ca",
  "cwd",
];

/**
 * Reads `--request FILE` (relative to the process working directory); a bad one is a usage error.
 * The request's JSON form (`src/runner/request_json.ts`) is imported only here: a run from flags
 * does not load it (a compile root in deno.json's `compile.include`).
 */
async function readRequest(file: string, cwd: string): Promise<RunRequest> {
  let text: string;
  try {
    text = Deno.readTextFileSync(resolve(cwd, file));
  } catch (e) {
    throw new UsageError(`cannot read the request file ${file}: ${(e as Error).message}`);
  }
  const { parseRequestJson, RequestJsonError } = await import("../runner/request_json.ts");
  try {
    return parseRequestJson(text, file);
  } catch (e) {
    if (e instanceof RequestJsonError) throw new UsageError(e.message);
    throw e;
  }
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
export async function parseRunArgs(argv: string[], quiet = false): Promise<RunSettings | "help" | "version"> {
  const parsed = parseFlags(argv, {
    script: { type: "string", short: "s" },
    block: { type: "string", short: "b" },
    project: { type: "string", short: "p" },
    cwd: { type: "string" },
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
    "nats-creds": { type: "string" },
    "nats-nkey": { type: "string" },
    "nats-token-file": { type: "string" },
    "nats-tls-ca": { type: "string" },
    sandbox: { type: "boolean" },
    request: { type: "string" },
    "sandbox-net": { type: "string" },
    version: { type: "boolean", short: "V" },
    help: { type: "boolean", short: "h" },
  });
  if (parsed.values.help) return "help";
  if (parsed.values.version) return "version";
  if (typeof parsed.values.request === "string") return requestSettings(parsed.values, quiet);
  const flags = runFlags(parsed.values);
  const project = flags.project ?? ".";
  // .env is the host half's config: layered in before the environment layer is read.
  const edge = await edgeEnvironment(project);
  if (!quiet) sayWarnings(edge.warnings);
  // `--config`'s reader is imported only when the flag is given (a compile root in deno.json)
  const cfg: RunConfig = flags.config !== undefined
    ? (await import("../config/run_config.ts")).readRunConfig(resolve(edge.cwd, flags.config), flags.config)
    : {};
  const projectRoot = resolve(edge.cwd, project);
  const cwdFlag = parsed.values.cwd as string | undefined;
  if (cwdFlag !== undefined && cwdFlag.trim() === "") throw new UsageError("--cwd needs a directory");
  const layered = resolveRunSettings(flags, edge.env, cfg);
  // a NATS relay's credential files from a flag or the config file reach the mesh as the run's
  // variables (as the project's .env sets them), made absolute: they are the caller's paths
  const env = { ...edge.env };
  for (const c of NATS_CREDENTIALS) {
    const variable = NATS_CREDENTIAL_VARIABLES[c.field];
    const file = layered.natsVars[variable];
    if (file === undefined) continue;
    const path = resolve(edge.cwd, file);
    const fromFlag = flags.nats[c.field] !== undefined;
    try {
      if (!Deno.statSync(path).isFile) throw new Error("not a file");
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      if (fromFlag) throw new UsageError(`--${c.flag} ${file} cannot be read: ${why}`);
      throw new AgentBlockError(`${flags.config}: field '${c.field}': cannot read ${file}: ${why}`);
    }
    env[variable] = path;
  }
  return {
    ...layered,
    env,
    cwd: edge.cwd,
    projectRoot,
    runCwd: cwdFlag !== undefined ? resolve(edge.cwd, cwdFlag) : projectRoot,
    sandbox: parsed.values.sandbox === true,
    sandboxNet: parsed.values["sandbox-net"] as string | undefined,
    warnings: edge.warnings,
  };
}

/** The settings of a `--request FILE` run: the request, plus the flags that say where its results go. */
async function requestSettings(
  values: Readonly<Record<string, unknown>>,
  quiet: boolean,
): Promise<RunSettings> {
  for (const flag of REQUEST_EXCLUDES) {
    if (values[flag] !== undefined && !(Array.isArray(values[flag]) && values[flag].length === 0)) {
      throw new UsageError(`--${flag} cannot be given with --request: the request file says the whole run`);
    }
  }
  const request = await readRequest(values.request as string, edgeCwd());
  const events = values.events as string | undefined;
  if (events !== undefined && events.trim() === "") {
    throw new UsageError("--events must be a file path, or - for stderr; got ''");
  }
  const edge = await edgeEnvironment(request.projectRoot);
  if (!quiet) sayWarnings(edge.warnings);
  return {
    script: "path" in request.script ? request.script.path : undefined,
    project: request.projectRoot,
    result: values.result as string | undefined,
    outcome: values.outcome as string | undefined,
    labels: { ...request.labels },
    mcpTimeoutSecs: (request.mcpTimeoutMs ?? 30_000) / 1000,
    progress: values.progress === true,
    events,
    natsVars: {},
    env: edge.env,
    cwd: edge.cwd,
    projectRoot: resolve(edge.cwd, request.projectRoot),
    runCwd: resolve(edge.cwd, request.cwd ?? request.projectRoot),
    sandbox: values.sandbox === true || request.sandbox === true,
    warnings: edge.warnings,
    request,
  };
}
