// src/host/llm/errors.ts
var LlmError = class extends Error {
  retryable;
  status;
  retryAfterMs;
  constructor(message, retryable = false, status = 0, retryAfterMs) {
    super(message), this.retryable = retryable, this.status = status, this.retryAfterMs = retryAfterMs;
    this.name = "LlmError";
  }
};

export {
  LlmError
};
