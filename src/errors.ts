/**
 * Typed errors of agent-block that end a process: each carries its exit code.
 *
 * Owns the exit-code contract of the seed README: 1 for a run that raised or never got to run
 * (unreadable source, contradictory flags, unknown block, bad config), 2 for a command line that
 * did not parse. 75 (`job.defer`) and 130 (SIGINT/SIGTERM) are outcomes, not errors.
 */

/**
 * An error that ends the process with `exitCode`. `BlockError` and `UsageError` are kinds of it.
 *
 * @example Map any agent-block error to an exit code
 * ```ts
 * import { AgentBlockError, BlockError, EXIT } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const exitCodeFor = (e: unknown): number => e instanceof AgentBlockError ? e.exitCode : EXIT.FAILED;
 * assert.equal(exitCodeFor(new AgentBlockError("disk full", 74)), 74);
 * assert.equal(exitCodeFor(new BlockError("cancelled", "stopped by the operator")), EXIT.INTERRUPTED);
 * assert.equal(exitCodeFor(new TypeError("not ours")), 1);
 * ```
 */
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

/**
 * The command line did not parse (exit 2).
 *
 * @example A wrapper refusing its own flags the way the CLI does
 * ```ts
 * import { EXIT, UsageError } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * function parseShard(arg: string): number {
 *   const n = Number(arg);
 *   if (!Number.isInteger(n) || n < 0) throw new UsageError(`--shard must be a whole number, got '${arg}'`);
 *   return n;
 * }
 * assert.equal(parseShard("3"), 3);
 * assert.throws(() => parseShard("x"), (e) => e instanceof UsageError && e.exitCode === EXIT.USAGE);
 * ```
 */
export class UsageError extends AgentBlockError {
  /**
   * A command line that did not parse.
   * @param message what did not parse
   * @param command the (sub)command whose help to point at (`knl show`); none: the run path
   */
  constructor(message: string, readonly command?: string) {
    super(message, 2);
    this.name = "UsageError";
  }
}

/**
 * Exit codes, named.
 *
 * @example A deferred run
 * ```ts
 * import { BlockConfig, EXIT, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const wait = ScriptSource.inline('job.defer("the nightly export is not there yet")', "wait.lua");
 * const report = await runBlock(BlockConfig.builder(wait, ".").env({}).build());
 * assert.equal(report.exitCode, EXIT.DEFERRED); // 75: nothing broke, try again later
 * assert.equal(report.error, undefined);
 * ```
 */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, DEFERRED: 75, INTERRUPTED: 130 } as const;
