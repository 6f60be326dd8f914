/**
 * Errors of the LLM transport: `LlmError`, what every failed model request is reported as.
 *
 * Owns the shape a caller branches on — `provider`, the HTTP `status` (0 when no answer came:
 * a refused connection, a timeout, a broken stream), `retryable` (the transient failures
 * `max_retries` covers: 429, 529, 5xx, a connection reset, an overload reported inside a stream
 * before anything was delivered), `retryAfterMs` (the server's `Retry-After`, when it sent
 * one) and `denied` (the connection was not permitted: `EACCES` on connect) — and the message, which names the provider and the cause and never carries a key or a
 * request body. The message names no function of a language face: the face words it
 * (`llm: <message>` in Lua).
 */

/** The wire families the transport speaks. */
export type WireProvider = "anthropic" | "openai";

/** What an `LlmError` carries besides its message. */
export interface LlmErrorDetails {
  retryable?: boolean;
  /** HTTP status, 0 when there was no answer. */
  status?: number;
  /** `Retry-After` in ms, when the server sent one. */
  retryAfterMs?: number;
  /** The connection was not permitted here (`EACCES` on connect: a sandbox's TCP rule). */
  denied?: boolean;
}

/** A failed model request. */
export class LlmError extends Error {
  readonly retryable: boolean;
  readonly status: number;
  readonly retryAfterMs?: number;
  /** The connection was not permitted (`EACCES` on connect), as a sandbox denying TCP does. */
  readonly denied: boolean;

  /**
   * @param provider the wire family the request went to
   * @param message what failed (provider and cause; no key, no body)
   * @param details status, retryability, Retry-After
   */
  constructor(readonly provider: WireProvider, message: string, details: LlmErrorDetails = {}) {
    super(message);
    this.name = "LlmError";
    this.retryable = details.retryable ?? false;
    this.status = details.status ?? 0;
    this.retryAfterMs = details.retryAfterMs;
    this.denied = details.denied ?? false;
  }
}
