/**
 * The typed settings of one run: what the `AGENT_BLOCK_*` variables configure, parsed once at
 * the edge.
 *
 * Owns the `RunSettings` shape and nothing else: no parser lives here. The edge (`src/cli`,
 * `mod.ts`, `unstable_flows.ts`) turns a run environment's variables into these values with
 * `settingsFromEnv` (`src/config/env_settings.ts`, the one place that knows the variables, their
 * spellings, defaults' triggers and error messages) and hands them to the run typed: inside the
 * `RunRequest` (`settings`, serialised by `src/runner/request_json.ts`) or as the in-process
 * runner's `envSettings`. Below the edge every module reads `RunContext.settings`, never an
 * environment string (tests/arch/env_settings_test.ts holds that).
 *
 * Invariants: every field is optional; an absent field is the module's own default (named where
 * it is used). The values are already checked (whole numbers in range); a consumer never
 * re-validates them. The environment left to a run (`RunEnv`) still carries the variables, so a
 * child agent-block process the run starts reads them at its own edge.
 */

/**
 * A log threshold (`AGENT_BLOCK_LOG`): `off` writes nothing.
 *
 * ```ts
 * import type { SettingsLogLevel } from "@agent-block/agent-block";
 * const level: SettingsLogLevel = "warn";
 * ```
 */
export type SettingsLogLevel = "debug" | "info" | "warn" | "error" | "off";

/**
 * What one run is configured with, beyond its request's own fields (`RunRequest.settings`).
 *
 * ```ts
 * import type { RunSettings } from "@agent-block/agent-block";
 * const settings: RunSettings = { logLevel: "debug", knlCommitMs: 0, stores: { kv: ":memory:" } };
 * ```
 */
export interface RunSettings {
  /** The logger's threshold (`AGENT_BLOCK_LOG`; default info). */
  logLevel?: SettingsLogLevel;
  /** Downgrade the seal check to warnings (`AGENT_BLOCK_UNSEAL=1`). */
  unseal?: boolean;
  /** Grace between SIGTERM and SIGKILL for the run's process groups, ms (`AGENT_BLOCK_TASK_GRACE_MS`; default 1000). */
  taskGraceMs?: number;
  /**
   * Store paths from the environment (`AGENT_BLOCK_KV_PATH`, `_SQL_PATH`, `_TS_PATH`,
   * `_KNL_PATH`; `:memory:` included): a path the request gives typed (`RunSpec.stores`) wins.
   */
  stores?: { kv?: string; sql?: string; ts?: string; kernel?: string };
  /** `$AGENT_BLOCK_HOME` (absent: the run's `home`, else `<user home>/.agent-block`). */
  home?: string;
  /** The kernel's commit window, ms (`AGENT_BLOCK_KNL_COMMIT_MS`, 0 to 60000; default 5: `src/knl/commit_window.ts`). */
  knlCommitMs?: number;
  /** The kernel's busy timeout, ms (`AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`; default 30 s: `src/knl/busy_timeout.ts`). */
  knlBusyTimeoutMs?: number;
  /** The kv/sql/ts stores' busy timeout, ms (`AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS`; default 5000). */
  sqlBusyTimeoutMs?: number;
  /** Default `max_response_bytes` of the run's model requests (`AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES`). */
  llmMaxResponseBytes?: number;
  /**
   * The sandbox's TCP is off for this run (`AGENT_BLOCK_SANDBOX_TCP` spelt off): a connection
   * refused with `EACCES` is then the sandbox's doing, and the model face's error says so.
   */
  sandboxTcpOff?: boolean;
  /**
   * What the run's children inherit of its environment (`AGENT_BLOCK_CHILD_ENV`: `inherit`,
   * `strip-secrets`, `allowlist:NAME,...`; `src/proc/child_env.ts`). Absent: `inherit`.
   */
  childEnv?: { kind: "inherit" } | { kind: "strip-secrets" } | { kind: "allowlist"; names: string[] };
  /**
   * The correlation ids the environment carries (`AGENT_BLOCK_TRACE_ID`, `_RUN_ID`, `_AGENT_ID`,
   * `_AGENT_NAME`, non-empty), by key; ids the request gives typed win.
   */
  correlation?: Readonly<Partial<Record<"trace_id" | "run_id" | "agent_id" | "agent_name", string>>>;
  /**
   * The mesh's credentials and switches, from the environment: used only by a run with a relay
   * (`RunRequest.mesh`). Each is set only when its variable is set and not empty.
   */
  mesh?: MeshSettings;
  /**
   * Lines the edge's parse has to say (a malformed setting that falls back to its default, such
   * as an unknown log level): the run writes each as a warning of its logger when it starts.
   */
  warnings?: string[];
}

/**
 * What the environment says about the mesh (see `src/host/mesh_open.ts`).
 *
 * ```ts
 * import type { MeshSettings } from "@agent-block/agent-block";
 * const mesh: MeshSettings = { natsCredsFile: "agent.creds", recordPayloads: true };
 * ```
 */
export interface MeshSettings {
  /** The secret key, 64 hex characters (`AGENT_BLOCK_MESH_SECRET_KEY`; `--secret-key` wins). */
  secretKey?: string;
  /** A NATS `.creds` file, relative to the run's cwd (`AGENT_BLOCK_NATS_CREDS`). */
  natsCredsFile?: string;
  /** A file holding a NATS nkey seed (`AGENT_BLOCK_NATS_NKEY`). */
  natsNkeyFile?: string;
  /** A NATS token (`AGENT_BLOCK_NATS_TOKEN`). */
  natsToken?: string;
  /** A file holding a NATS token (`AGENT_BLOCK_NATS_TOKEN_FILE`). */
  natsTokenFile?: string;
  /** The PEM file of the CA a NATS server's certificate chains to (`AGENT_BLOCK_NATS_TLS_CA`). */
  natsTlsCaFile?: string;
  /** Put payloads into the kernel's mesh records (`AGENT_BLOCK_MESH_RECORD_PAYLOADS=1`). */
  recordPayloads?: boolean;
}

/** How a confined run reaches the network (`--sandbox-net`, `AGENT_BLOCK_SANDBOX_NET`). */
export type SandboxNetMode = "open" | "off" | "allow-list";

/**
 * What the sandbox of one launch is configured with (`src/sandbox/**` takes it as it is): read by
 * the edge (`sandboxSettingsFromEnv`, `src/config/env_settings.ts`) from the environment of
 * whoever starts the run, made stricter, never looser, by what the project's `.env` adds. Not part
 * of `RunSettings`: the launcher is a process stage of its own, before any run exists, and the
 * confined runtime it starts reads its environment again at its own edge.
 */
export interface SandboxSettings {
  /** The agent-block home, absolute (`AGENT_BLOCK_HOME`, else `<HOME>/.agent-block`; starter only). */
  home: string;
  /** Extra write grants, absolute, in the order given (`AGENT_BLOCK_SANDBOX_FS_RW`; starter only). */
  fsRw: string[];
  /** TCP allowed (`AGENT_BLOCK_SANDBOX_TCP`: the starter's and the project's must both allow it). */
  tcp: boolean;
  /** `.git` stays writable (`AGENT_BLOCK_SANDBOX_GIT_RW`; starter only). */
  gitRw: boolean;
  /**
   * The network's mode: the flag, else the starter's variable, else `open`; made stricter by the
   * project's value; `off` whenever `tcp` is false.
   */
  net: SandboxNetMode;
  /**
   * The starter's allow-list entries as written, one `host[:port]` each
   * (`AGENT_BLOCK_SANDBOX_NET_ALLOW`, split at commas and spaces; starter only): their grammar is
   * the proxy's (`src/sandbox/net_policy.ts`), checked where the allow-list is used.
   */
  netAllow: string[];
  /**
   * The model providers' base URLs of the run's environment (`ANTHROPIC_BASE_URL`,
   * `OPENAI_BASE_URL`, when set and not empty): allowed under the allow-list.
   */
  providerUrls: { anthropic?: string; openai?: string };
  /** The test seam's pretended Landlock ABI (`AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI`; starter only). */
  testAbi?: number;
  /** The test seam `AGENT_BLOCK_SANDBOX_TEST_USERNS=1` (starter only). */
  testUserNs: boolean;
  /** The test seam `AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1` (starter only). */
  testNoNetns: boolean;
  /** The starter-only variables the project's `.env` set and that were ignored (one warning each). */
  ignored: string[];
}

/** The settings of a run for which the edge read nothing: every default. */
export const NO_SETTINGS: Readonly<RunSettings> = Object.freeze({});
