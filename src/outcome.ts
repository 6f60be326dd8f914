/**
 * How a run ended: the one outcome type every way of running a block reports, and its exit code.
 *
 * Owns `Outcome` and `exitCodeOf`. `runBlock` (in-process), the child-process runner (which reads
 * the child's `--outcome` file), the CLI, the MCP server and the coming `serve` and flows all speak
 * it, so "how did it end" is decided in one place and never re-derived from text on stderr.
 *
 * Invariants:
 * - `returned`: the chunk's first return value, stringified by Lua's `tostring` (a string passes
 *   unchanged, bytes exact); `undefined` when it returned nothing. Exit 0.
 * - `deferred`: `job.defer(reason)`. Exit 75 (sysexits `EX_TEMPFAIL`), the one non-zero code
 *   that means nothing broke.
 * - `exited`: `os.exit(code)`; the code is the exit code.
 * - `failed`: the run raised or never started (unreadable script, bad project, seal violation,
 *   compile error); `message` is what `error: ` prints, `traceback` may be empty, `error` is the
 *   raised Lua value when it was not a string (a table keeps its structure). Exit 1.
 * - `stopped`: cancelled from outside (SIGINT/SIGTERM, an embedder's abort, a client's cancel).
 *   Exit 130.
 * - `timed_out`: a runner's wall-clock limit ended it (never produced by `runBlock` itself).
 *   Exit 124, as `timeout(1)` reports it.
 */
import { EXIT } from "./errors.ts";

/** How one run ended. */
export type Outcome =
  | { status: "returned"; value: string | Uint8Array | undefined }
  | { status: "deferred"; reason: string }
  | { status: "exited"; code: number }
  | { status: "failed"; message: string; traceback: string; error?: unknown }
  | { status: "stopped"; reason: string }
  | { status: "timed_out"; seconds: number };

/** The `status` names of `Outcome`. */
export type OutcomeStatus = Outcome["status"];

/** Exit code of a run whose wall-clock limit ended it (as `timeout(1)`). */
export const EXIT_TIMED_OUT = 124;

/** The process exit code that reports `outcome`. */
export function exitCodeOf(outcome: Outcome): number {
  switch (outcome.status) {
    case "returned":
      return EXIT.OK;
    case "deferred":
      return EXIT.DEFERRED;
    case "exited":
      return outcome.code;
    case "failed":
      return EXIT.FAILED;
    case "stopped":
      return EXIT.INTERRUPTED;
    case "timed_out":
      return EXIT_TIMED_OUT;
  }
}

/** A `failed` outcome for a run that never started, with `message` and no traceback. */
export function failedOutcome(message: string): Outcome {
  return { status: "failed", message, traceback: "" };
}
