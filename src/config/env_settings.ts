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
 * - `AGENT_BLOCK_TASK_GRACE_MS`: a whole number of ms (`wholeMilliseconds`);
 * - `AGENT_BLOCK_KV_PATH`, `_SQL_PATH`, `_TS_PATH`, `_KNL_PATH`, `AGENT_BLOCK_HOME`: a path when
 *   set and not blank (resolved by the run: the stores against its cwd, the kernel against its
 *   project root);
 * - `AGENT_BLOCK_KNL_COMMIT_MS` (0 to 60000), `AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`,
 *   `AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS`: whole numbers of ms;
 * - `AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES`: a positive whole number of bytes;
 * - the correlation ids `AGENT_BLOCK_TRACE_ID`, `_RUN_ID`, `_AGENT_ID`, `_AGENT_NAME` (non-empty;
 *   named by `src/correlation.ts`);
 * - `AGENT_BLOCK_CHILD_ENV`: `inherit`, `strip-secrets` or `allowlist:NAME,...`
 *   (`parseChildEnvPolicy`; anything else throws `ChildEnvPolicyError`, naming it);
 * - `AGENT_BLOCK_SANDBOX_TCP`: off when `0`, `false`, `no` or `off` (any case, spaces ignored);
 * - the mesh's `AGENT_BLOCK_MESH_SECRET_KEY`, `AGENT_BLOCK_NATS_CREDS`, `_NKEY`, `_TOKEN`,
 *   `_TOKEN_FILE`, `_TLS_CA` (when set and not empty; files are read by the run, against its cwd,
 *   only when it joins a mesh) and `AGENT_BLOCK_MESH_RECORD_PAYLOADS` (exactly `1`).
 *
 * - the run command's knobs (`resolveRunSettings`: `AGENT_BLOCK_CPU_LIMIT_SECS`,
 *   `AGENT_BLOCK_MEMORY_LIMIT_MB`, `AGENT_BLOCK_MCP_TIMEOUT_SECS`, positive numbers, and the switch
 *   `AGENT_BLOCK_PROGRESS`: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; an empty value is
 *   unset; a bad one is an `AgentBlockError` naming the variable, read only when no flag gives
 *   the knob). `prompt`, `context`, `result`, `outcome` and `events` have no variable: they are
 *   what ONE run is, and an inherited variable would hand a child run its parent's prompt and
 *   result file (or have it write into its parent's event stream);
 * - `AGENT_BLOCK_SANDBOX` (`sandboxRequested`): off is unset, empty, `0`, `false`, `no` or `off`
 *   (any case, surrounding spaces ignored: the spellings `AGENT_BLOCK_SANDBOX_TCP` reads as off),
 *   anything else asks for the sandbox. The edge hands such a run to the sandbox launcher (or
 *   tells its runner: `ChildRunner`'s `sandbox`, `serve`'s `sandbox`); `refuseSandbox` stops a
 *   command that does not run under it (`agent-block test`) rather than run it unconfined
 *   (`AgentBlockError`, exit 1);
 * - the sandbox launcher's settings (`sandboxSettingsFromEnv` → `SandboxSettings`, for
 *   `src/cli/sandbox_launch.ts` and the preflight of `mcp` and `a2a serve`): `AGENT_BLOCK_HOME`,
 *   `AGENT_BLOCK_SANDBOX_FS_RW` (`:`-separated paths), the switches `AGENT_BLOCK_SANDBOX_TCP`,
 *   `_GIT_RW`, `_TEST_USERNS`, `_TEST_NO_NETNS` (`1`/`true`/`yes`/`on`/empty or
 *   `0`/`false`/`no`/`off`, else an `AgentBlockError` naming the variable), the network's mode
 *   `AGENT_BLOCK_SANDBOX_NET` (`open`, `off`, `allow-list`; `--sandbox-net` wins), its list
 *   `AGENT_BLOCK_SANDBOX_NET_ALLOW` and the seam `AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI` (a
 *   non-negative integer), from the starter's environment. What the project's `.env` adds may
 *   only make the sandbox stricter: the starter-only names (`SANDBOX_STARTER_ONLY`) are ignored
 *   there and listed for a warning, its `_TCP` counts only as a denial and its `_NET` only when
 *   stricter (open < allow-list < off).
 *
 * Errors: a numeric variable that is set but malformed throws the `RangeError` of
 * `wholeMilliseconds` (naming the variable and the value); a runner turns it into a run that
 * never started (`raised`, code `config`, exit 1).
 */
import { join, resolve } from "node:path";
import { wholeMilliseconds } from "../run_env.ts";
import { AgentBlockError, UsageError } from "../errors.ts";
import { RUN_CORRELATION_IDS } from "../correlation.ts";
import { type ChildEnvPolicy, parseChildEnvPolicy } from "../proc/child_env.ts";
import { kind, type LayeredRunSettings, NATS_CREDENTIALS, positive, type RunFlags } from "./settings.ts";
import { parseMeshUrl } from "../clients/mesh/connect.ts";
import type { RunConfig } from "./run_config.ts";
import { userHome } from "../home.ts";
import { MAX_COMMIT_WINDOW_MS } from "../knl/commit_window.ts";
import { MAX_BUSY_TIMEOUT_MS } from "../knl/busy_timeout.ts";
import type {
  MeshSettings,
  RunSettings,
  SandboxNetMode,
  SandboxSettings,
  SettingsLogLevel,
} from "../run_settings.ts";

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
  const stores = storePathsFromEnv(e);
  if (Object.keys(stores).length) out.stores = stores;
  const home = e.get("AGENT_BLOCK_HOME");
  if (nonBlank(home)) out.home = home;
  const ms = (name: string, max?: number) =>
    nonBlank(e.get(name)) ? wholeMilliseconds(e, name, 0, max) : undefined;
  const put = <K extends keyof RunSettings>(k: K, v: RunSettings[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  put("knlCommitMs", ms("AGENT_BLOCK_KNL_COMMIT_MS", MAX_COMMIT_WINDOW_MS));
  put("knlBusyTimeoutMs", ms("AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS", MAX_BUSY_TIMEOUT_MS));
  put("sqlBusyTimeoutMs", ms("AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS"));
  const rawBytes = e.get("AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES");
  if (nonBlank(rawBytes)) {
    const n = Number(rawBytes);
    if (!Number.isInteger(n) || n <= 0) {
      throw new RangeError(
        `AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES must be a positive whole number of bytes, got '${rawBytes}'`,
      );
    }
    out.llmMaxResponseBytes = n;
  }
  if (isOff(e.get("AGENT_BLOCK_SANDBOX_TCP"))) out.sandboxTcpOff = true;
  const ids: Record<string, string> = {};
  for (const id of RUN_CORRELATION_IDS) {
    const v = e.get(id.variable);
    if (v !== undefined && v !== "") ids[id.key] = v;
  }
  if (Object.keys(ids).length) out.correlation = ids;
  const childEnv = childEnvPolicyFromEnv(e);
  if (childEnv.kind !== "inherit") out.childEnv = childEnv;
  const mesh: MeshSettings = {};
  for (const [field, name] of MESH_VARS) {
    const v = e.get(name);
    if (v !== undefined && v !== "") mesh[field] = v;
  }
  if (e.get("AGENT_BLOCK_MESH_RECORD_PAYLOADS") === "1") mesh.recordPayloads = true;
  if (Object.keys(mesh).length) out.mesh = mesh;
  if (warnings.length) out.warnings = warnings;
  return out;
}

/**
 * The store paths `env` names (`AGENT_BLOCK_KV_PATH`, `_SQL_PATH`, `_TS_PATH`, `_KNL_PATH`; set
 * and not blank). Never throws: for an edge that needs only a path (`knl`, `flow`, the MCP
 * server's call record).
 */
export function storePathsFromEnv(env: EnvSource): NonNullable<RunSettings["stores"]> {
  const e = view(env);
  const stores: NonNullable<RunSettings["stores"]> = {};
  for (const [kind, name] of STORE_PATH_VARS) {
    const v = e.get(name);
    if (nonBlank(v)) stores[kind] = v;
  }
  return stores;
}

/**
 * `$AGENT_BLOCK_HOME` of `env` when set and not blank, else `<user home>/.agent-block` (the
 * user's home: HOME, USERPROFILE, else `fallback`, the working directory the edge resolved).
 */
export function agentBlockHome(env: EnvSource, fallback: string): string {
  const v = view(env).get("AGENT_BLOCK_HOME");
  return v && v.trim() ? v : join(userHome(view(env), fallback), ".agent-block");
}

/** The home and kernel paths `env` names, for flows (`FlowEdge.paths`). Never throws. */
export function flowPaths(env: EnvSource, cwd: string): { home: string; kernel?: string } {
  const kernel = storePathsFromEnv(env).kernel;
  const home = agentBlockHome(env, cwd);
  return kernel !== undefined ? { home, kernel } : { home };
}

/**
 * The child-environment policy `env`'s `AGENT_BLOCK_CHILD_ENV` names (`inherit` when unset): for
 * a run, and for an edge's own process groups (`serve`, `agent-block mcp`).
 * @throws ChildEnvPolicyError naming the variable and the value
 */
export function childEnvPolicyFromEnv(env: EnvSource): ChildEnvPolicy {
  return parseChildEnvPolicy(view(env).get("AGENT_BLOCK_CHILD_ENV"));
}

/** The mesh's string settings and their variables. */
const MESH_VARS: [Exclude<keyof MeshSettings, "recordPayloads">, string][] = [
  ["secretKey", "AGENT_BLOCK_MESH_SECRET_KEY"],
  ["natsCredsFile", "AGENT_BLOCK_NATS_CREDS"],
  ["natsNkeyFile", "AGENT_BLOCK_NATS_NKEY"],
  ["natsToken", "AGENT_BLOCK_NATS_TOKEN"],
  ["natsTokenFile", "AGENT_BLOCK_NATS_TOKEN_FILE"],
  ["natsTlsCaFile", "AGENT_BLOCK_NATS_TLS_CA"],
];

/** The variables naming the stores' files. */
export const STORE_PATH_VARS: readonly [keyof NonNullable<RunSettings["stores"]>, string][] = [
  ["kv", "AGENT_BLOCK_KV_PATH"],
  ["sql", "AGENT_BLOCK_SQL_PATH"],
  ["ts", "AGENT_BLOCK_TS_PATH"],
  ["kernel", "AGENT_BLOCK_KNL_PATH"],
];

/** `0`, `false`, `no` or `off`, any case, surrounding spaces ignored. */
function isOff(v: string | undefined): boolean {
  const t = v?.trim().toLowerCase();
  return t === "0" || t === "false" || t === "no" || t === "off";
}

function nonBlank(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== "";
}

// --- the run command's layering (config < environment < flags) and the sandbox switch ---

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
 * The run variable the mesh reads each NATS credential file from (`src/host/mesh_open.ts`; the
 * project's `.env` may set it too), by the config field's name.
 */
export const NATS_CREDENTIAL_VARIABLES: Readonly<Record<(typeof NATS_CREDENTIALS)[number]["field"], string>> =
  {
    nats_creds: "AGENT_BLOCK_NATS_CREDS",
    nats_nkey: "AGENT_BLOCK_NATS_NKEY",
    nats_token_file: "AGENT_BLOCK_NATS_TOKEN_FILE",
    nats_tls_ca: "AGENT_BLOCK_NATS_TLS_CA",
  };

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
    const variable = NATS_CREDENTIAL_VARIABLES[c.field];
    const flag = flags.nats[c.field];
    const fromEnv = Object.hasOwn(env, variable) && env[variable] !== "";
    const value = flag ?? (fromEnv ? undefined : config[c.field]);
    if (value === undefined) continue;
    if (relay === undefined || parseMeshUrl(relay).kind !== "nats") {
      const what = flag !== undefined ? `--${c.flag}` : `the config file's field '${c.field}'`;
      const msg = `${what} is for a NATS relay (--relay nats://...), and the run has ${
        relay === undefined ? "no relay" : "a relay that is not NATS"
      }`;
      throw flag !== undefined ? new UsageError(msg) : new AgentBlockError(msg);
    }
    out[variable] = value;
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

// --- the sandbox launcher's settings (src/sandbox/**, entered from src/cli/sandbox_launch.ts) ---

/**
 * Settings only the starter's environment may give: the same names in what the project's `.env`
 * adds are ignored (and listed, for a warning). A confined run could otherwise widen its own next
 * sandbox through a file inside its project.
 */
export const SANDBOX_STARTER_ONLY: readonly string[] = [
  "AGENT_BLOCK_SANDBOX_FS_RW",
  "AGENT_BLOCK_SANDBOX_GIT_RW",
  "AGENT_BLOCK_HOME",
  "HOME",
  "USERPROFILE",
  "AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI",
  "AGENT_BLOCK_SANDBOX_TEST_USERNS",
  "AGENT_BLOCK_SANDBOX_NET_ALLOW",
  "AGENT_BLOCK_SANDBOX_TEST_NO_NETNS",
];

const SANDBOX_ON = new Set(["", "1", "true", "yes", "on"]);
const SANDBOX_OFF = new Set(["0", "false", "no", "off"]);

/** A sandbox switch: unset or blank is `fallback`; a spelling of neither is an error naming it. */
function sandboxSwitch(
  env: { get(name: string): string | undefined },
  name: string,
  fallback: boolean,
): boolean {
  const raw = env.get(name);
  if (raw === undefined) return fallback;
  const v = raw.trim().toLowerCase();
  if (v === "") return fallback;
  if (SANDBOX_ON.has(v)) return true;
  if (SANDBOX_OFF.has(v)) return false;
  throw new AgentBlockError(`${name} must be 1, true, yes, on or 0, false, no, off; got '${raw}'`);
}

/** How strict each network mode is: the project's `.env` may only move up. */
const NET_STRICTNESS: Record<SandboxNetMode, number> = { open: 0, "allow-list": 1, off: 2 };

/**
 * `raw` as a network mode (`open`, `off`, `allow-list`, any case, spaces ignored), or an
 * `AgentBlockError` naming `what` (the flag or the variable) and the value.
 */
export function parseSandboxNetMode(raw: string, what: string): SandboxNetMode {
  const v = raw.trim().toLowerCase();
  if (v === "open" || v === "off" || v === "allow-list") return v;
  throw new AgentBlockError(`${what} must be open, off or allow-list; got '${raw}'`);
}

/** What `sandboxSettingsFromEnv` takes beside the starter's environment. */
export interface SandboxSettingsInput {
  /** The variables the project's `.env` added to the run's environment (they may only tighten). */
  fromProject?: Readonly<Record<string, string>>;
  /** `--sandbox-net`, when given: it wins over `AGENT_BLOCK_SANDBOX_NET`. */
  netFlag?: string;
  /** The run's environment (the starter's with `.env` layered in): the model providers' URLs. */
  runEnv?: EnvSource;
}

/**
 * The sandbox's settings (`SandboxSettings`) from `starter`, the environment of whoever starts
 * the run (the process environment, never the project's `.env`), made stricter by
 * `fromProject`: the starter-only names (`SANDBOX_STARTER_ONLY`) there are ignored and listed,
 * `AGENT_BLOCK_SANDBOX_TCP` there counts only when it denies TCP, `AGENT_BLOCK_SANDBOX_NET`
 * there only when stricter than the starter's mode. Relative paths are taken from `cwd`.
 * @throws AgentBlockError naming the variable (or `--sandbox-net`) and the value: a malformed
 *   `AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI`, switch (`_TCP`, `_GIT_RW`, `_TEST_USERNS`,
 *   `_TEST_NO_NETNS`) or network mode
 */
export function sandboxSettingsFromEnv(
  starter: EnvSource,
  cwd: string,
  input: SandboxSettingsInput = {},
): SandboxSettings {
  const e = view(starter);
  const fromProject = input.fromProject ?? {};
  const project = view(fromProject);
  const ignored = SANDBOX_STARTER_ONLY.filter((name) =>
    Object.hasOwn(fromProject, name) && e.get(name) === undefined
  );
  const home = resolve(cwd, agentBlockHome(e, cwd));
  const fsRw = (e.get("AGENT_BLOCK_SANDBOX_FS_RW") ?? "").split(":").filter((entry) => entry.trim() !== "")
    .map((entry) => resolve(cwd, entry));
  const rawAbi = e.get("AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI");
  let testAbi: number | undefined;
  if (rawAbi !== undefined && rawAbi.trim() !== "") {
    testAbi = Number(rawAbi);
    if (!Number.isInteger(testAbi) || testAbi < 0) {
      throw new AgentBlockError(
        `AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI must be a non-negative integer, got '${rawAbi}'`,
      );
    }
  }
  // the project may deny TCP (stricter), never allow it where the starter denied it
  const tcp = sandboxSwitch(e, "AGENT_BLOCK_SANDBOX_TCP", true) &&
    sandboxSwitch(project, "AGENT_BLOCK_SANDBOX_TCP", true);
  const gitRw = sandboxSwitch(e, "AGENT_BLOCK_SANDBOX_GIT_RW", false);
  const testUserNs = sandboxSwitch(e, "AGENT_BLOCK_SANDBOX_TEST_USERNS", false);
  const testNoNetns = sandboxSwitch(e, "AGENT_BLOCK_SANDBOX_TEST_NO_NETNS", false);
  const starterNet = e.get("AGENT_BLOCK_SANDBOX_NET");
  let net: SandboxNetMode = input.netFlag !== undefined
    ? parseSandboxNetMode(input.netFlag, "--sandbox-net")
    : nonBlank(starterNet)
    ? parseSandboxNetMode(starterNet, "AGENT_BLOCK_SANDBOX_NET")
    : "open";
  const projectNet = project.get("AGENT_BLOCK_SANDBOX_NET");
  if (nonBlank(projectNet)) {
    const p = parseSandboxNetMode(projectNet, "AGENT_BLOCK_SANDBOX_NET (in the project's .env)");
    if (NET_STRICTNESS[p] > NET_STRICTNESS[net]) net = p;
  }
  if (!tcp) net = "off";
  const netAllow = (e.get("AGENT_BLOCK_SANDBOX_NET_ALLOW") ?? "").split(/[,\s]+/).filter((s) => s !== "");
  const run = view(input.runEnv ?? starter);
  const providerUrls: SandboxSettings["providerUrls"] = {};
  const anthropic = run.get("ANTHROPIC_BASE_URL");
  if (anthropic) providerUrls.anthropic = anthropic;
  const openai = run.get("OPENAI_BASE_URL");
  if (openai) providerUrls.openai = openai;
  return {
    home,
    fsRw,
    tcp,
    gitRw,
    net,
    netAllow,
    providerUrls,
    ...(testAbi !== undefined ? { testAbi } : {}),
    testUserNs,
    testNoNetns,
    ignored,
  };
}

/** The variables `env` holds beyond `processEnv`: what the project's `.env` added (it never overrides). */
export function projectAdded(
  env: Readonly<Record<string, string>>,
  processEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !Object.hasOwn(processEnv, k)));
}
