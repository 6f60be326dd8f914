/**
 * One way to run a block: the `BlockRunner` interface and the request every runner takes.
 *
 * Two implementations, interchangeable behind this interface:
 * - `InProcessRunner` (`in_process.ts`): the block runs in this process through `runBlock`; what
 *   the embedding SDK uses;
 * - `ChildRunner` (`child.ts`): the block runs in an agent-block process of its own, which
 *   reports how it ended through its `--outcome` file; what `agent-block mcp` uses, and what
 *   `serve` and flows will.
 *
 * Invariants:
 * - A runner never throws for anything the run did or the request asked: every way a run can
 *   end, including a bad request or a child that could not be started, is an `Outcome`
 *   (`src/outcome.ts`) in the report. Runners add facts of their own (the child's stderr tail)
 *   next to the outcome, never a second outcome type.
 * - The request carries everything that makes one run what it is — the environment included:
 *   nothing is taken from the process running the runner.
 * - `timed_out` is decided by the runner (its `timeoutMs`), `stopped` by `signal` (or the
 *   runner's own shutdown), whatever the block itself reported while being ended.
 */
import type { Outcome } from "../outcome.ts";

/** What to run, and with what. The same for every runner. */
export interface RunRequest {
  /**
   * The block: a script file (resolved against `cwd`), or inline source with the name its
   * errors show (the child runner takes files only).
   */
  script: { path: string } | { source: string | Uint8Array; name: string; dir?: string };
  /** A short name for logs (default: the script's file name). */
  name?: string;
  /** Project root (`--project`); resolved against `cwd`. */
  projectRoot: string;
  /** `_PROMPT` (absent when undefined). */
  prompt?: string;
  /** `_CONTEXT` (absent when undefined). */
  context?: string;
  /** Run labels (`--label k=v`). */
  labels?: Record<string, string>;
  /**
   * The run's environment, resolved by the caller's edge. In process it is the run's `RunEnv`
   * base; a child process gets it as its environment, minus the host's credentials (the process
   * layer removes them), and layers its own project's `.env` in as any run does.
   */
  env: Readonly<Record<string, string>>;
  /** The run's working directory (absolute). Default: the project root. */
  cwd?: string;
  /** Wall-clock limit, ms; past it the run is ended and reported `timed_out`. Default: none. */
  timeoutMs?: number;
  /** Aborting ends the run; it is reported `stopped`. */
  signal?: AbortSignal;
}

/** What every runner reports: how the run ended. */
export interface RunReport {
  /** How the run ended. */
  outcome: Outcome;
}

/** Calls a runner makes while a run goes on. */
export interface RunHooks {
  /**
   * The run has started (`pid`: its process, when it has one of its own; `tag`: the process tag
   * its tree carries, `src/proc/tags.ts`, so an owner can find and end it after a restart).
   */
  onStart?: (info: { pid?: number; tag?: string }) => void;
}

/** Runs blocks. `R` is the report, `RunReport` plus whatever the implementation adds. */
export interface BlockRunner<R extends RunReport = RunReport> {
  /** Runs one block to its end; never rejects for anything the run did. */
  run(request: RunRequest, hooks?: RunHooks): Promise<R>;
}

/** The name a run is logged under: `request.name`, else the script's file name. */
export function runName(request: RunRequest): string {
  if (request.name) return request.name;
  const p = "path" in request.script ? request.script.path : request.script.name;
  return p.slice(Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\")) + 1);
}
