/**
 * Errors of the LLM transport. Every message starts with `llm:` and names the provider, so a
 * failed `agent.run` says where it broke; none carries a key or a request body.
 *
 * `retryable` marks the transient failures `max_retries` covers (429, 529, 5xx, a connection
 * reset, an overload reported inside a stream before anything was delivered).
 */

/** A failed model request. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly retryable = false,
    readonly status = 0,
    /** `Retry-After` in ms, when the server sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "LlmError";
  }
}
