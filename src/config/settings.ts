/**
 * The settings of one run, layered: the `--config` file, then the environment for knobs that
 * have a variable, then flags — the later winning. This module owns the flag layer.
 *
 * Owns the layering rule and its validation, as pure functions of their inputs (no file, no
 * process environment: the CLI reads those and hands them in), so the rule can be checked on its
 * own and an embedder resolving the same inputs gets the same settings:
 * - `runFlags(values)`: the flag layer from parsed flag values — `--label K=V` pairs
 *   (`parseLabels`), positive numbers, and exactly one of `--script` / `--block` (a contradiction
 *   or nothing to run is refused before any file is read);
 * - the layering of the three (`resolveRunSettings`, with the NATS credential files of a NATS
 *   `--relay` — `--nats-creds`, `--nats-nkey`, `--nats-token-file`, `--nats-tls-ca`, or the
 *   config's `nats_*` fields, `NATS_CREDENTIALS`) and the sandbox switch (`sandboxRequested`,
 *   `refuseSandbox`) read environment variables, so they live with the edge's parser of the
 *   `AGENT_BLOCK_*` variables, `src/config/env_settings.ts`.
 * Errors: a bad flag is a `UsageError` (exit 2) naming the flag.
 */
import { AgentBlockError, UsageError } from "../errors.ts";
import type { NATS_CONFIG_FIELDS } from "./run_config.ts";
import { meshUrlProblem } from "../clients/mesh/connect.ts";
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
 * The NATS credential settings of a NATS `--relay`: the config field and its flag (the run's
 * variable the mesh reads each from is `env_settings.ts`'s `NATS_CREDENTIAL_VARIABLES`).
 */
export const NATS_CREDENTIALS: readonly {
  field: (typeof NATS_CONFIG_FIELDS)[number];
  flag: string;
}[] = [
  { field: "nats_creds", flag: "nats-creds" },
  { field: "nats_nkey", flag: "nats-nkey" },
  { field: "nats_token_file", flag: "nats-token-file" },
  { field: "nats_tls_ca", flag: "nats-tls-ca" },
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

/** `raw` as a positive number (an integer when `integer`), else `undefined`. */
export function positive(raw: string, integer: boolean): number | undefined {
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n)) ? n : undefined;
}

/** What `positive` asks for, in words. */
export function kind(integer: boolean): string {
  return integer ? "integer" : "number";
}

function flagNumber(values: FlagValues, flag: string, integer = false): number | undefined {
  const raw = values[flag];
  if (typeof raw !== "string") return undefined;
  const n = positive(raw, integer);
  if (n === undefined) throw new UsageError(`--${flag} must be a positive ${kind(integer)}, got '${raw}'`);
  return n;
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
