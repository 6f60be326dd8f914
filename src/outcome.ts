/**
 * How a run ended: the one outcome type every way of running a block reports, and its exit code.
 *
 * Owns `Outcome` and `exitCodeOf`. The runtime's `runBlock`, both runners (the child runner reads
 * it from the child's `end` event), the CLI, the MCP server, `serve` and the SDK all speak it, so
 * "how did it end" is decided in one place and never re-derived from text on stderr.
 *
 * Invariants:
 * - `returned`: the chunk's first return value, stringified by Lua's `tostring` (a string passes
 *   unchanged, bytes exact); `undefined` when it returned nothing. Exit 0.
 * - `deferred`: `job.defer(reason)`. Exit 75 (sysexits `EX_TEMPFAIL`), the one non-zero code
 *   that means nothing broke.
 * - `exited`: `os.exit(code)`; the code is the exit code.
 * - `raised`: the run raised or never started; `code` says which part failed: `script` (the
 *   block raised, or did not compile), `config` (it never started: unreadable script, bad
 *   project, seal violation, a bad setting), `llm` / `mcp` (an error of the model transport or of
 *   an MCP server reached the top uncaught: the raised value is the error table those faces
 *   raise, whose `source` field says so). `message` is what `error: ` prints, `traceback` may be
 *   empty, `error` is the raised Lua value when it was not a string (a table keeps its
 *   structure). Exit 1.
 * - `cancelled`: ended from outside (SIGINT/SIGTERM, an embedder's abort, a client's cancel).
 *   Exit 130.
 * - `timed_out`: a runner's wall-clock limit ended it (never produced by `runBlock` itself).
 *   Exit 124, as `timeout(1)` reports it.
 */
import { EXIT } from "./errors.ts";

/**
 * How one run ended.
 *
 * ```ts
 * import { BlockConfig, type Outcome, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * function line(outcome: Outcome): string {
 *   switch (outcome.status) {
 *     case "returned":
 *       return `returned ${typeof outcome.value === "string" ? outcome.value : "(bytes or nothing)"}`;
 *     case "deferred":
 *       return `deferred: ${outcome.reason}`;
 *     case "exited":
 *       return `exited with ${outcome.code}`;
 *     case "raised":
 *       return `raised (${outcome.code}): ${outcome.message}`;
 *     case "cancelled":
 *       return `cancelled: ${outcome.reason}`;
 *     case "timed_out":
 *       return `timed out after ${outcome.seconds} s`;
 *   }
 * }
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline('error("bad input", 0)', "bad.lua"), ".").env({}).build(),
 * );
 * assert.equal(line(report.outcome), "raised (script): bad input");
 * assert.equal(line({ status: "deferred", reason: "no data yet" }), "deferred: no data yet");
 * ```
 */
export type Outcome =
  | { status: "returned"; value: string | Uint8Array | undefined }
  | { status: "deferred"; reason: string }
  | { status: "exited"; code: number }
  | { status: "raised"; code: RaisedCode; message: string; traceback: string; error?: unknown }
  | { status: "cancelled"; reason: string }
  | { status: "timed_out"; seconds: number };

/**
 * Which part of a `raised` run failed (see the module doc).
 *
 * ```ts
 * import { BlockConfig, type RaisedCode, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("return (", "broken.lua"), ".").env({}).build(),
 * );
 * const code: RaisedCode | undefined = report.outcome.status === "raised" ? report.outcome.code : undefined;
 * assert.equal(code, "script"); // a syntax error is the script's
 * ```
 */
export type RaisedCode = "script" | "config" | "llm" | "mcp";

/**
 * The `code` names of a `raised` outcome, in a fixed order.
 *
 * @example Check a code read from outside
 * ```ts
 * import { RAISED_CODES, type RaisedCode } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const isRaisedCode = (s: string): s is RaisedCode => (RAISED_CODES as readonly string[]).includes(s);
 * assert.deepEqual(RAISED_CODES, ["script", "config", "llm", "mcp"]);
 * assert.ok(isRaisedCode("llm"));
 * assert.ok(!isRaisedCode("timeout"));
 * ```
 */
export const RAISED_CODES: readonly RaisedCode[] = ["script", "config", "llm", "mcp"];

/**
 * The `status` names of `Outcome`.
 *
 * ```ts
 * import { BlockConfig, type OutcomeStatus, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const tally: Partial<Record<OutcomeStatus, number>> = {};
 * for (const lua of ["return 1", "return 2", 'job.defer("later")']) {
 *   const { outcome } = await runBlock(
 *     BlockConfig.builder(ScriptSource.inline(lua, "t.lua"), ".").env({}).build(),
 *   );
 *   tally[outcome.status] = (tally[outcome.status] ?? 0) + 1;
 * }
 * assert.deepEqual(tally, { returned: 2, deferred: 1 });
 * ```
 */
export type OutcomeStatus = Outcome["status"];

/**
 * Exit code of a run whose wall-clock limit ended it (as `timeout(1)`).
 *
 * @example A run past its `timeoutMs`
 * ```ts
 * import { BlockConfig, EXIT_TIMED_OUT, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const slow = ScriptSource.inline("std.task.sleep(10)", "slow.lua");
 * const report = await runBlock(BlockConfig.builder(slow, ".").timeoutMs(100).env({}).build());
 * assert.deepEqual(report.outcome, { status: "timed_out", seconds: 0.1 });
 * assert.equal(report.exitCode, EXIT_TIMED_OUT);
 * assert.equal(report.error?.code, "timeout");
 * ```
 */
export const EXIT_TIMED_OUT = 124;

/**
 * The process exit code that reports `outcome`: what `agent-block` exits with for the same ending.
 *
 * @example A runner that ends like the CLI
 * ```ts
 * import { exitCodeOf } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.equal(exitCodeOf({ status: "returned", value: "ok" }), 0);
 * assert.equal(exitCodeOf({ status: "deferred", reason: "no input yet" }), 75);
 * assert.equal(exitCodeOf({ status: "exited", code: 3 }), 3);
 * assert.equal(exitCodeOf({ status: "raised", code: "llm", message: "HTTP 529", traceback: "" }), 1);
 * assert.equal(exitCodeOf({ status: "cancelled", reason: "SIGTERM" }), 130);
 * ```
 */
export function exitCodeOf(outcome: Outcome): number {
  switch (outcome.status) {
    case "returned":
      return EXIT.OK;
    case "deferred":
      return EXIT.DEFERRED;
    case "exited":
      return outcome.code;
    case "raised":
      return EXIT.FAILED;
    case "cancelled":
      return EXIT.INTERRUPTED;
    case "timed_out":
      return EXIT_TIMED_OUT;
  }
}

/** A `raised` outcome (code `config`) for a run that never started, with `message` and no traceback. */
export function notStarted(message: string): Outcome {
  return { status: "raised", code: "config", message, traceback: "" };
}

/**
 * The code of a Lua error value that reached the top of a run: `llm` / `mcp` for the error tables
 * those faces raise (field `source`), `script` for anything else.
 */
export function raisedCodeOf(value: unknown): RaisedCode {
  if (typeof value === "object" && value !== null) {
    const source = (value as Record<string, unknown>).source;
    if (source === "llm" || source === "mcp") return source;
  }
  return "script";
}
