/**
 * What host functions know about the run they serve.
 *
 * Owns the `RunContext` shape: the environment, working directory, paths, output sinks, logger,
 * process groups, secrets, labels, observer and cleanup hooks of ONE run. Host modules receive it at
 * install time and take every setting from it: none reads the process environment (`run.env`
 * instead) or parses an `AGENT_BLOCK_*` variable (`run.settings` instead) or resolves a path against the process working directory (`run.resolve` instead), so an
 * embedder can run several blocks in one process without them seeing each other.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { Logger } from "../obs/log.ts";
import type { ProcessGroups } from "../proc/group.ts";
import type { Outcome } from "../outcome.ts";
import type { RunEnv } from "../run_env.ts";
import type { RunSettings } from "../run_settings.ts";
import type { RunCorrelationIds } from "../correlation.ts";
import type { Secrets } from "../obs/secrets.ts";
import type { RunObserver } from "../obs/run_events.ts";
import type { RunTrace } from "../obs/otel/run_trace.ts";
import type { MeshTransport } from "../clients/mesh/transport.ts";
import type { BusHost } from "./bus.ts";

/** The run a host module is installed for. */
export interface RunContext {
  /** The run's environment (resolved at the edge, plus what `std.env.set` changed). */
  env: RunEnv;
  /**
   * The run's typed settings (`src/run_settings.ts`), parsed at the edge: host modules take their
   * knobs from here, never from an `AGENT_BLOCK_*` variable of `env`.
   */
  settings: Readonly<RunSettings>;
  /** Absolute working directory of the run: relative paths resolve against it. */
  cwd: string;
  /** `path` made absolute against the run's working directory (absolute paths unchanged). */
  resolve(path: string): string;
  /** Absolute, canonical project root (`--project`). */
  projectRoot: string;
  /** Absolute directory of the running script (first tier of `require`). */
  scriptDir: string;
  /** The script's file name (`_SCRIPT_NAME`). */
  scriptName: string;
  /**
   * The script as the run's kernel sessions record it (`script` in their seed event): its path
   * relative to the project root when below it, else absolute; an inline script's name.
   */
  script: string;
  /** `$AGENT_BLOCK_HOME` (default `~/.agent-block`). */
  home: string;
  /**
   * The run's correlation ids by key (`src/correlation.ts`): the request's, over those the edge
   * read from the environment. What every face stamps its records with.
   */
  correlation: RunCorrelationIds;
  /** Labels of the run (`--label k=v`). */
  labels: Record<string, string>;
  /**
   * Store paths of the run: the typed ones (`RunRequest.stores`) over those the edge read from
   * `AGENT_BLOCK_*_PATH` (`settings.stores`); a path absent here is the default. Optional for
   * contexts made by hand.
   */
  stores?: Readonly<{ kv?: string; sql?: string; ts?: string; kernel?: string }>;
  /** Writes to the script's standard output (`print`, `io.write`). */
  stdout: (bytes: Uint8Array) => void;
  /** Writes to standard error (logs, `io.stderr`). */
  stderr: (bytes: Uint8Array) => void;
  /** The run's logger (stderr; level from `settings.logLevel`); it scrubs `secrets` from every line. */
  log: Logger;
  /**
   * The run's secret values (the host's credential variables, the keys of its model calls):
   * masked wherever text from outside is recorded or printed (see `src/obs/secrets.ts`).
   */
  secrets: Secrets;
  /** The run's process groups; every child is started here and ended with the run. */
  procs: ProcessGroups;
  /** Timeout of every MCP request, ms. */
  mcpTimeoutMs: number;
  /** The `fetch` of model requests; `undefined`: the global one. */
  llmFetch: typeof fetch | undefined;
  /**
   * Whoever watches the run (`src/obs/run_events.ts`): the kernel's writers hand it their commits,
   * the MCP host its connects and calls. `undefined` when nothing watches: then do nothing extra.
   */
  observe: RunObserver | undefined;
  /**
   * The run's trace when it is traced (`src/obs/otel/run_trace.ts`): the kernel hands it its rows,
   * MCP calls, `sh.exec` and `http.request` open spans in it, model requests go through its
   * `modelFetch`. `undefined` when the run is not traced: then do nothing extra.
   */
  trace?: RunTrace;
  /**
   * The run's mesh connection (`--relay`), opened before the script runs, and the bus its inbound
   * requests are emitted into (kind `mesh`); `undefined` without `--relay`.
   */
  mesh: { transport: MeshTransport; bus: BusHost } | undefined;
  /**
   * Records host traffic (mesh messages, the sandbox proxy's refusals) as an event of the run's innermost open kernel session;
   * set by the kernel's host module once installed (`knl.ts`), a no-op while no session is open.
   * `undefined` when the run never touched the kernel: nothing is recorded then.
   */
  recordTraffic?: (kind: string, data: Record<string, unknown>) => void;
  /** Records that the run opened the kernel session `id` (the SDK reports them). */
  sessionOpened(id: string): void;
  /**
   * Registers work to do when the run ends, whatever the outcome (newest first). The function
   * receives the run's outcome, or `undefined` when the main chunk never started.
   */
  onCleanup(fn: (outcome: Outcome | undefined) => void | Promise<void>): void;
}

/** A unit of the standard library: installs its host functions into an engine. */
export type HostModule = (engine: LuaEngine, run: RunContext) => void;
