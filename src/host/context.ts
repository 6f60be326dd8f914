/**
 * What host functions know about the run they serve.
 *
 * Owns the `RunContext` shape: paths, output sinks, logger, process groups, labels and cleanup
 * hooks of ONE run. Host modules receive it at install time; nothing in it is global, so an
 * embedder can run several blocks in one process without them seeing each other.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { Logger } from "../obs/log.ts";
import type { ProcessGroups } from "../proc/group.ts";

/** The run a host module is installed for. */
export interface RunContext {
  /** Absolute, canonical project root (`--project`). */
  projectRoot: string;
  /** Absolute directory of the running script (first tier of `require`). */
  scriptDir: string;
  /** The script's file name (`_SCRIPT_NAME`). */
  scriptName: string;
  /** `$AGENT_BLOCK_HOME` (default `~/.agent-block`). */
  home: string;
  /** Labels of the run (`--label k=v`). */
  labels: Record<string, string>;
  /** Writes to the script's standard output (`print`, `io.write`). */
  stdout: (bytes: Uint8Array) => void;
  /** Writes to standard error (logs, `io.stderr`). */
  stderr: (bytes: Uint8Array) => void;
  /** The run's logger (stderr; level from `AGENT_BLOCK_LOG`). */
  log: Logger;
  /** The run's process groups; every child is started here and ended with the run. */
  procs: ProcessGroups;
  /** Timeout of every MCP request, ms. */
  mcpTimeoutMs: number;
  /**
   * Registers work to do when the run ends, whatever the outcome (newest first). The function
   * receives how the main chunk ended: `"returned"`, `"exit"` (os.exit / job.defer), `"error"`,
   * `"stopped"` (SIGINT/SIGTERM, embedder cancel), or `"not-started"`.
   */
  onCleanup(fn: (ending: RunEnding) => void | Promise<void>): void;
}

/** How the main chunk ended, as cleanup functions see it. */
export type RunEnding = "returned" | "exit" | "error" | "stopped" | "not-started";

/** A unit of the standard library: installs its host functions into an engine. */
export type HostModule = (engine: LuaEngine, run: RunContext) => void;
