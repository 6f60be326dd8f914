/**
 * The one error type of the model-facing file tools: a failure written for the model.
 *
 * Owns `ToolError`. The binding (`../fs_tools.ts`) answers it as `nil, message` to the Lua
 * wrapper, which raises the message without a position; any other error is a bug and propagates.
 */

/** A failure reported to the model, as is. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}
