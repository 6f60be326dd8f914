/**
 * The settings of one run, layered: the `--config` file, then the environment for knobs that
 * have a variable, then flags — the later winning.
 *
 * Owns the layering rule and its validation, as pure functions of their inputs (no file, no
 * process environment: the CLI reads those and hands them in), so the rule can be checked on its
 * own and an embedder resolving the same inputs gets the same settings:
 * - `runFlags(values)`: the flag layer from parsed flag values — `--label K=V` pairs
 *   (`parseLabels`), positive numbers, and exactly one of `--script` / `--block` (a contradiction
 *   or nothing to run is refused before any file is read);
 * - `resolveRunSettings(flags, env, config)`: the three layers merged (`natsVars`: the NATS
 *   credential files of a NATS `--relay` — `--nats-creds`, `--nats-nkey`, `--nats-token-file`,
 *   `--nats-tls-ca`, or the config's `nats_*` fields — by the run variable the mesh reads them
 *   from, so a flag, the environment (the project's `.env` included) and the config file reach
 *   the mesh the same way). Knobs with an environment
 *   variable: `AGENT_BLOCK_CPU_LIMIT_SECS`, `AGENT_BLOCK_MEMORY_LIMIT_MB`,
 *   `AGENT_BLOCK_MCP_TIMEOUT_SECS`, and the switch `AGENT_BLOCK_PROGRESS` (`1`/`true`/`yes`/`on`
 *   or `0`/`false`/`no`/`off`; an empty value is unset; a bad one is an error naming the
 *   variable). `prompt`, `context`, `result`, `outcome` and `events` have none: they are what ONE
 *   run is, and an inherited variable would hand a child run its parent's prompt and result file
 *   (or have it write into its parent's event stream). Labels merge key by key, a flag's winning.
 * - `sandboxRequested(value)`: whether `AGENT_BLOCK_SANDBOX` asks for the sandbox — off is
 *   unset, empty, `0`, `false`, `no` or `off` (any case, surrounding spaces ignored: the spellings
 *   the seed's `AGENT_BLOCK_SANDBOX_TCP` reads as off), anything else asks. The run command hands
 *   such a run to the sandbox launcher (`src/sandbox/`); `refuseSandbox` stops a command that
 *   does not run under it (`agent-block test`) rather than run it unconfined (`AgentBlockError`,
 *   exit 1). (Here rather than in `src/sandbox/`: the run path loads this module already, and
 *   the sandbox's modules are loaded only when a sandbox is asked for.)
 * Errors: a bad flag is a `UsageError` (exit 2) naming the flag; a bad variable an
 * `AgentBlockError` naming the variable.
 */
import { AgentBlockError, UsageError } from "../errors.ts";
import type { NATS_CONFIG_FIELDS, RunConfig } from "./run_config.ts";
import { meshUrlProblem, parseMeshUrl } from "../clients/mesh/connect.ts";
import { secretKeyProblem } from "../clients/mesh/base64url.ts";

/** Parsed flag values, as `parseFlags` answers them. */
export type FlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** The flag layer of one run, validated. */
export interface RunFlags {
  script?: string;
  block?: string;
  project?: string;
  prompt?: string;
  context?: string;
  /** The `--config` file, as given. */
  config?: string;
  result?: string;
  /** `--outcome FILE`: where the run's outcome is written as JSON. */
  outcome?: string;
  labels: Record<string, string>;
  cpuLimitSecs?: number;
  memoryLimitMb?: number;
  mcpTimeoutSecs?: number;
  /** `--progress` was given. */
  progress?: true;
  /** `--events FILE` (`-`: stderr). */
  events?: string;
  /** `--relay URL`: the mesh to join. */
  relay?: string;
  /** `--secret-key HEX`: the mesh identity. */
  secretKey?: string;
  /** `--nats-creds` / `--nats-nkey` / `--nats-token-file` / `--nats-tls-ca`, by config field name. */
  nats: NatsFiles;
}

/** The NATS credential files of a run's mesh, by the config file's field name (`nats_creds`, ...). */
export type NatsFiles = Partial<Record<(typeof NATS_CONFIG_FIELDS)[number], string>>;

/**
 * The NATS credential settings of a NATS `--relay`: the config field, its flag, and the run's
 * variable the mesh reads (`src/host/mesh_open.ts`; the project's `.env` may set it too).
 */
export const NATS_CREDENTIALS: readonly {
  field: (typeof NATS_CONFIG_FIELDS)[number];
  flag: string;
  variable: string;
}[] = [
  { field: "nats_creds", flag: "nats-creds", variable: "AGENT_BLOCK_NATS_CREDS" },
  { field: "nats_nkey", flag: "nats-nkey", variable: "AGENT_BLOCK_NATS_NKEY" },
  { field: "nats_token_file", flag: "nats-token-file", variable: "AGENT_BLOCK_NATS_TOKEN_FILE" },
  { field: "nats_tls_ca", flag: "nats-tls-ca", variable: "AGENT_BLOCK_NATS_TLS_CA" },
];

/** The layered settings of one run (what to run and with what limits). */
export interface LayeredRunSettings {
  script?: string;
  block?: string;
  /** Project root as given (default `.`). */
  project: string;
  prompt?: string;
  context?: string;
  result?: string;
  /** `--outcome FILE`: where the run's outcome is written as JSON. */
  outcome?: string;
  labels: Record<string, string>;
  cpuLimitSecs?: number;
  memoryLimitMb?: number;
  /** Timeout of every MCP request, seconds (default 30). */
  mcpTimeoutSecs: number;
  /** Print one line per step of the run on stderr (`--progress`, `AGENT_BLOCK_PROGRESS`). */
  progress: boolean;
  /** Stream the run's kernel events as JSON Lines to this file (`-`: stderr). */
  events?: string;
  /** The mesh to join (`--relay`, the config's `relay`). */
  relay?: string;
  /** The mesh identity (`--secret-key`; else the run's `AGENT_BLOCK_MESH_SECRET_KEY`). */
  secretKey?: string;
  /**
   * The NATS credential files a flag or the config file gives, by the run's variable
   * (`AGENT_BLOCK_NATS_CREDS`, ...), as given (the caller resolves them against its working
   * directory and sets them in the run's environment). A variable the environment sets already
   * is absent unless a flag names it: flag, then environment, then config file.
   */
  natsVars: Record<string, string>;
}

/**
 * `--label K=V` values as a record (a later repeat of a key wins). `command` prefixes the error
 * (`knl sessions: --label must be …`).
 */
export function parseLabels(raw: readonly string[], command?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of raw) {
    const eq = l.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(`${command ? command + ": " : ""}--label must be KEY=VALUE, got '${l}'`, command);
    }
    out[l.slice(0, eq)] = l.slice(eq + 1);
  }
  return out;
}

function positive(raw: string, integer: boolean): number | undefined {
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n)) ? n : undefined;
}

function kind(integer: boolean): string {
  return integer ? "integer" : "number";
}

function flagNumber(values: FlagValues, flag: string, integer = false): number | undefined {
  const raw = values[flag];
  if (typeof raw !== "string") return undefined;
  const n = positive(raw, integer);
  if (n === undefined) throw new UsageError(`--${flag} must be a positive ${kind(integer)}, got '${raw}'`);
  return n;
}

function envNumber(env: Readonly<Record<string, string>>, name: string, integer = false): number | undefined {
  const raw = Object.hasOwn(env, name) ? env[name] : undefined;
  if (raw === undefined || raw === "") return undefined;
  const n = positive(raw, integer);
  if (n === undefined) throw new AgentBlockError(`${name} must be a positive ${kind(integer)}, got '${raw}'`);
  return n;
}

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["0", "false", "no", "off"]);

function envSwitch(env: Readonly<Record<string, string>>, name: string): boolean | undefined {
  const raw = Object.hasOwn(env, name) ? env[name] : undefined;
  if (raw === undefined || raw.trim() === "") return undefined;
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new AgentBlockError(`${name} must be 1, true, yes, on or 0, false, no, off; got '${raw}'`);
}

function str(values: FlagValues, flag: string): string | undefined {
  const v = values[flag];
  return typeof v === "string" ? v : undefined;
}

/** The flag layer from parsed values (flag names as on the command line, without `--`). */
export function runFlags(values: FlagValues): RunFlags {
  const rawLabels = values.label;
  const labels = parseLabels(Array.isArray(rawLabels) ? rawLabels : []);
  const cpuLimitSecs = flagNumber(values, "cpu-limit");
  const memoryLimitMb = flagNumber(values, "memory-limit");
  const mcpTimeoutSecs = flagNumber(values, "mcp-timeout-secs", true);
  const script = str(values, "script");
  const block = str(values, "block");
  if (script !== undefined && block !== undefined) {
    throw new AgentBlockError("--script and --block contradict each other: name one script to run");
  }
  if (script === undefined && block === undefined) {
    throw new UsageError("nothing to run: pass --script FILE or --block NAME (see --help)");
  }
  const events = str(values, "events");
  if (events !== undefined && events.trim() === "") {
    throw new UsageError("--events must be a file path, or - for stderr; got ''");
  }
  const relay = str(values, "relay");
  const badRelay = relay !== undefined ? meshUrlProblem(relay, "--relay") : undefined;
  if (badRelay !== undefined) throw new UsageError(badRelay);
  const nats: NatsFiles = {};
  for (const c of NATS_CREDENTIALS) {
    const v = str(values, c.flag);
    if (v === undefined) continue;
    if (v.trim() === "") throw new UsageError(`--${c.flag} needs a file`);
    nats[c.field] = v;
  }
  const secretKey = str(values, "secret-key");
  if (secretKey !== undefined) {
    const why = secretKeyProblem(secretKey);
    if (why !== undefined) throw new UsageError(`--secret-key: ${why}`);
  }
  return {
    script,
    block,
    relay,
    secretKey,
    nats,
    project: str(values, "project"),
    prompt: str(values, "prompt"),
    context: str(values, "context"),
    config: str(values, "config"),
    result: str(values, "result"),
    outcome: str(values, "outcome"),
    labels,
    cpuLimitSecs,
    memoryLimitMb,
    mcpTimeoutSecs,
    progress: values.progress === true ? true : undefined,
    events,
  };
}

/** The three layers merged: `config` < `env` < `flags`. */
export function resolveRunSettings(
  flags: RunFlags,
  env: Readonly<Record<string, string>>,
  config: RunConfig,
): LayeredRunSettings {
  return {
    script: flags.script,
    block: flags.block,
    project: flags.project ?? ".",
    prompt: flags.prompt ?? config.prompt,
    context: flags.context ?? config.context,
    result: flags.result ?? config.result,
    outcome: flags.outcome ?? config.outcome,
    labels: { ...(config.labels ?? {}), ...flags.labels },
    cpuLimitSecs: flags.cpuLimitSecs ?? envNumber(env, "AGENT_BLOCK_CPU_LIMIT_SECS") ?? config.cpu_limit_secs,
    memoryLimitMb: flags.memoryLimitMb ?? envNumber(env, "AGENT_BLOCK_MEMORY_LIMIT_MB") ??
      config.memory_limit_mb,
    mcpTimeoutSecs: flags.mcpTimeoutSecs ?? envNumber(env, "AGENT_BLOCK_MCP_TIMEOUT_SECS", true) ??
      config.mcp_timeout_secs ?? 30,
    progress: flags.progress ?? envSwitch(env, "AGENT_BLOCK_PROGRESS") ?? config.progress ?? false,
    events: flags.events ?? config.events,
    relay: flags.relay ?? config.relay,
    secretKey: flags.secretKey,
    natsVars: natsVars(flags, env, config),
  };
}

/**
 * The credential files of a NATS relay from the flags and the config file (see
 * `LayeredRunSettings.natsVars`).
 * @throws UsageError for a `--nats-*` flag (AgentBlockError for a config field) without a NATS relay
 */
function natsVars(
  flags: RunFlags,
  env: Readonly<Record<string, string>>,
  config: RunConfig,
): Record<string, string> {
  const relay = flags.relay ?? config.relay;
  const out: Record<string, string> = {};
  for (const c of NATS_CREDENTIALS) {
    const flag = flags.nats[c.field];
    const fromEnv = Object.hasOwn(env, c.variable) && env[c.variable] !== "";
    const value = flag ?? (fromEnv ? undefined : config[c.field]);
    if (value === undefined) continue;
    if (relay === undefined || parseMeshUrl(relay).kind !== "nats") {
      const what = flag !== undefined ? `--${c.flag}` : `the config file's field '${c.field}'`;
      const msg = `${what} is for a NATS relay (--relay nats://...), and the run has ${
        relay === undefined ? "no relay" : "a relay that is not NATS"
      }`;
      throw flag !== undefined ? new UsageError(msg) : new AgentBlockError(msg);
    }
    out[c.variable] = value;
  }
  return out;
}

const OFF = new Set(["", "0", "false", "no", "off"]);

/** True when `value` (of `AGENT_BLOCK_SANDBOX`) asks for the sandbox. */
export function sandboxRequested(value: string | undefined): boolean {
  return value !== undefined && !OFF.has(value.trim().toLowerCase());
}

/**
 * Refuses to run `command` (which does not run under the sandbox) when the environment's
 * `AGENT_BLOCK_SANDBOX` asks for the sandbox: a requested sandbox is never silently dropped.
 */
export function refuseSandbox(env: Readonly<Record<string, string>>, command: string): void {
  const value = Object.hasOwn(env, "AGENT_BLOCK_SANDBOX") ? env.AGENT_BLOCK_SANDBOX : undefined;
  if (sandboxRequested(value)) {
    throw new AgentBlockError(
      `${command}: AGENT_BLOCK_SANDBOX=${value} asks for the sandbox, and agent-block ${command} does not run ` +
        `under it: it stops rather than run unconfined (unset it, or set it to 0, in the environment or ` +
        `the project's .env)`,
    );
  }
}
