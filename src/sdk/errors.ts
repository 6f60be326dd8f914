/**
 * `BlockError`: the one error type of the embedding SDK, with a `code` a caller branches on and
 * the exit code the CLI would end with.
 *
 * Owns the mapping from an `Outcome` to its error (`blockErrorOf`): a run that raised, was
 * cancelled or timed out has one; a run that returned, deferred or exited has none (those are
 * ways to end, not failures). And the `config` errors the builder throws for a setting it refuses.
 *
 * Invariants: the message names the field or value at fault (config) or is the raised error's
 * text (script, llm, mcp); `traceback` is the Lua traceback when there was one; `value` is the
 * raised Lua value when it was not a string, with its structure (an `llm` or `mcp` error table).
 */
import { AgentBlockError, EXIT } from "../errors.ts";
import { EXIT_TIMED_OUT, type Outcome } from "../outcome.ts";

/**
 * What failed: see `BlockError`.
 *
 * ```ts
 * import { BlockConfig, type BlockErrorCode, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * // worth another try later? a model or MCP outage, a timeout; a broken script or config is not
 * const retryable = (code: BlockErrorCode): boolean =>
 *   code === "llm" || code === "mcp" || code === "timeout";
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.path("no/such/block.lua"), ".").env({}).build(),
 * );
 * assert.equal(report.error?.code, "config");
 * assert.equal(retryable(report.error!.code), false);
 * ```
 */
export type BlockErrorCode = "script" | "config" | "llm" | "mcp" | "cancelled" | "timeout";

/** The exit code of each `BlockErrorCode`, as the CLI reports it. */
const EXIT_OF: Record<BlockErrorCode, number> = {
  script: EXIT.FAILED,
  config: EXIT.FAILED,
  llm: EXIT.FAILED,
  mcp: EXIT.FAILED,
  cancelled: EXIT.INTERRUPTED,
  timeout: EXIT_TIMED_OUT,
};

/**
 * What a `BlockError` carries besides its code and message.
 *
 * ```ts
 * import {
 *   BlockConfig,
 *   BlockError,
 *   type BlockErrorDetails,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * // a raised table keeps its structure in `value`
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline('error({ reason = "quota", left = 0 })', "quota.lua"), ".")
 *     .env({})
 *     .build(),
 * );
 * assert.deepEqual(report.error?.value, { reason: "quota", left: 0 });
 *
 * // the same details on an error of the embedder's own
 * const details: BlockErrorDetails = { traceback: "", value: { reason: "quota" } };
 * assert.equal(new BlockError("script", "over quota", details).value, details.value);
 * ```
 */
export interface BlockErrorDetails {
  /** The Lua traceback of a raised error ("" when there was none). */
  traceback?: string;
  /** The raised Lua value when it was not a string (a table keeps its structure). */
  value?: unknown;
}

/**
 * A block that failed, or a setting refused. `code` says what failed:
 * - `script`: the block raised (or did not compile);
 * - `config`: the run never started (a refused setting, an unreadable script or prompt file,
 *   a project that does not exist);
 * - `llm`, `mcp`: a model request or an MCP server failed and the block did not catch it;
 * - `cancelled`: the run's `signal` aborted it;
 * - `timeout`: it ran past its `timeoutMs`.
 *
 * `exitCode` is what the CLI exits with for the same ending (1, 130 or 124).
 *
 * @example Branch on the code
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline('error("no input")', "fail.lua"), ".").env({}).build(),
 * );
 * assert.equal(report.error?.code, "script");
 * assert.equal(report.error?.exitCode, 1);
 * assert.match(report.error!.message, /no input/);
 * ```
 */
export class BlockError extends AgentBlockError {
  /** What failed. */
  readonly code: BlockErrorCode;
  /** The Lua traceback ("" when there was none). */
  readonly traceback: string;
  /** The raised Lua value when it was not a string. */
  readonly value: unknown;

  /**
   * A block error.
   * @param code what failed
   * @param message what went wrong, naming the field or value at fault
   * @param details the traceback and the raised value
   */
  constructor(code: BlockErrorCode, message: string, details: BlockErrorDetails = {}) {
    super(message, EXIT_OF[code]);
    this.name = "BlockError";
    this.code = code;
    this.traceback = details.traceback ?? "";
    this.value = details.value;
  }
}

/**
 * The error of a run that raised, was cancelled or timed out; `undefined` for one that returned,
 * deferred or exited.
 *
 * @example The error of an outcome
 * ```ts
 * import { blockErrorOf } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.equal(blockErrorOf({ status: "cancelled", reason: "shutting down" })?.exitCode, 130);
 * assert.equal(blockErrorOf({ status: "returned", value: "ok" }), undefined);
 * ```
 */
export function blockErrorOf(outcome: Outcome): BlockError | undefined {
  switch (outcome.status) {
    case "raised":
      return new BlockError(outcome.code, outcome.message, {
        traceback: outcome.traceback,
        value: outcome.error,
      });
    case "cancelled":
      return new BlockError("cancelled", `cancelled: ${outcome.reason}`);
    case "timed_out":
      return new BlockError("timeout", `the run ran past its timeout of ${outcome.seconds} s`);
    default:
      return undefined;
  }
}
