/**
 * The in-process `BlockRunner`: the block runs in this process, through `runBlock`.
 *
 * Owns the mapping from a `RunRequest` to a `RunSpec` and the runner's wall-clock limit. What a
 * request does not say (output sinks, extra host modules, limits) is fixed per runner by its
 * options, so an embedder configures that once and runs many blocks side by side.
 *
 * Invariants:
 * - The outcome is `runBlock`'s, unchanged, except when the runner's own limit ended the run:
 *   then it is `timed_out`. The limit aborts the run like `signal` does, so it takes effect at
 *   the next point where Lua waits for the host, or within about 0.1 s of Lua computing (the
 *   engine's watchdog returns to the event loop; src/lua/watchdog.ts).
 * - `runBlock` reports a failure to start as `failed`; anything it throws (a bug) becomes a
 *   `failed` outcome naming it rather than a rejection.
 */
import type { EngineLimits } from "../lua/engine.ts";
import type { HostModule } from "../host/context.ts";
import { runBlock } from "../runtime/run.ts";
import type { BlockRunner, RunHooks, RunReport, RunRequest } from "./runner.ts";
import { WallClock } from "./wall_clock.ts";

/** What an in-process runner fixes for all its runs. */
export interface InProcessOptions {
  /** Sink for the blocks' stdout (default: the process stdout). */
  stdout?: (bytes: Uint8Array) => void;
  /** Sink for logs and `io.stderr` (default: the process stderr). */
  stderr?: (bytes: Uint8Array) => void;
  /** Host modules installed after the standard ones. */
  modules?: readonly HostModule[];
  /** CPU-time and heap limits of every run. */
  limits?: EngineLimits;
  /** Timeout of every MCP request, ms (default 30 000). */
  mcpTimeoutMs?: number;
}

/** Runs blocks in this process. */
export class InProcessRunner implements BlockRunner {
  /**
   * A runner with `options` for every run.
   * @param options sinks, modules and limits shared by the runs
   */
  constructor(private readonly options: InProcessOptions = {}) {}

  /** Runs `request` to its outcome. */
  async run(request: RunRequest, hooks?: RunHooks): Promise<RunReport> {
    const clock = new WallClock(request.timeoutMs, request.signal);
    try {
      hooks?.onStart?.({});
      const outcome = await runBlock({
        script: request.script,
        projectRoot: request.projectRoot,
        env: request.env,
        cwd: request.cwd,
        prompt: request.prompt,
        context: request.context,
        labels: request.labels,
        signal: clock.signal,
        stdout: this.options.stdout,
        stderr: this.options.stderr,
        modules: this.options.modules,
        limits: this.options.limits,
        mcpTimeoutMs: this.options.mcpTimeoutMs,
      });
      return { outcome: clock.judge(outcome) };
    } catch (e) {
      return {
        outcome: {
          status: "raised",
          code: "config",
          message: `internal failure running the block: ${(e as Error)?.message ?? e}`,
          traceback: (e as Error)?.stack ?? "",
        },
      };
    } finally {
      clock.clear();
    }
  }
}
