/**
 * Typed errors of agent-block that end a process: each carries its exit code.
 *
 * Owns the exit-code contract of the seed README: 1 for a run that raised or never got to run
 * (unreadable source, contradictory flags, unknown block, bad config), 2 for a command line that
 * did not parse. 75 (`job.defer`) and 130 (SIGINT/SIGTERM) are outcomes, not errors.
 */

/** An error that ends the process with `exitCode`. */
export class AgentBlockError extends Error {
  /**
   * An error ending the process with `exitCode`.
   * @param message what went wrong, naming the file, field or value
   * @param exitCode the process's exit code (default 1)
   */
  constructor(message: string, readonly exitCode: number = 1) {
    super(message);
    this.name = "AgentBlockError";
  }
}

/** The command line did not parse (exit 2). */
export class UsageError extends AgentBlockError {
  /**
   * A command line that did not parse.
   * @param message what did not parse
   */
  constructor(message: string) {
    super(message, 2);
    this.name = "UsageError";
  }
}

/** Exit codes, named. */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, DEFERRED: 75, INTERRUPTED: 130 } as const;
