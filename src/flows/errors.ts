/**
 * The errors of a flow: what evaluating a flow can raise, and what reading a Blueprint can refuse.
 *
 * Owns `FlowError` (an evaluation error with its class: the seven classes of the engine's flow IR
 * 0.2, which a `try` node catches) and `FlowCancelled` (an abort, which no `try` catches), and
 * `BlueprintError` (a Blueprint, agent file or flow IR that cannot be run: exit 2, naming the file,
 * the JSON pointer or line, and what was expected).
 *
 * Invariant: the message of a `FlowError` is what a `try` node's `err_at` receives, so it says
 * everything a catch branch needs (the step's ref for a dispatch failure).
 */
import { AgentBlockError, EXIT } from "../errors.ts";

/** The classes of evaluation error (the engine's names). */
export type FlowErrorClass =
  | "PathNotFound"
  | "InvalidPath"
  | "NonBoolCond"
  | "TypeError"
  | "ArithError"
  | "DispatcherError"
  | "ExternError";

/** An error evaluating a flow; a `try` node catches every one. */
export class FlowError extends Error {
  /**
   * An evaluation error.
   * @param kind the error's class
   * @param message what went wrong (what `err_at` receives)
   * @param ref for a `DispatcherError`, the step's ref
   */
  constructor(readonly kind: FlowErrorClass, message: string, readonly ref?: string) {
    super(message);
    this.name = "FlowError";
  }
}

/** The flow was stopped from outside (an AbortSignal, Ctrl-C); no `try` catches it. */
export class FlowCancelled extends Error {
  /**
   * A stopped flow.
   * @param reason why it was stopped
   */
  constructor(readonly reason: string) {
    super(`flow cancelled: ${reason}`);
    this.name = "FlowCancelled";
  }
}

/** A step asked the flow to wait for an answer (`spec.on_defer = "wait"`); no `try` catches it. */
export class FlowWaiting extends Error {
  /**
   * A flow waiting at a step.
   * @param ref the waiting step's ref
   * @param reason the block's `job.defer` reason
   */
  constructor(readonly ref: string, readonly reason: string) {
    super(`step '${ref}' is waiting: ${reason}`);
    this.name = "FlowWaiting";
  }
}

/** A Blueprint, agent file or flow that cannot be run (exit 2). */
export class BlueprintError extends AgentBlockError {
  /**
   * A Blueprint that cannot be run.
   * @param message where (file, JSON pointer or line) and what was expected
   */
  constructor(message: string) {
    super(message, EXIT.USAGE);
    this.name = "BlueprintError";
  }
}
