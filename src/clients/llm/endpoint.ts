/**
 * Where a provider's requests go and which headers they carry.
 *
 * Owns the public endpoints (Anthropic's root has no `/v1`, the path adds it; OpenAI's root has
 * it), the request paths, and the headers the pinned SDKs send (`@anthropic-ai/sdk` 1.x:
 * `authorization: Bearer` and `anthropic-version: 2026-10-21`; `openai`: `authorization:
 * Bearer`), plus `anthropic-beta` and our user agent. An Anthropic request carrying sampling
 * parameters goes out as version 2023-06-01 with `x-api-key` (2026-10-21 refuses them).
 *
 * Takes the base URL and the key as values: where they come from (options, the run's
 * environment, in which order) is the caller's business (`src/host/llm/endpoint.ts`).
 *
 * Invariant: a public endpoint without a key is refused before any request (`LlmError`); a custom
 * base URL (a local vLLM, llama.cpp or Ollama) may go without one.
 */
import { LlmError, type WireProvider } from "./errors.ts";

/** The `anthropic-version` header, as `@anthropic-ai/sdk` 1.14 sends it. */
export const ANTHROPIC_VERSION = "2026-10-21";

/**
 * The one other version a request may ask for (`llm_proto.anthropic`'s `SAMPLING_API_VERSION`):
 * 2026-10-21 refuses `temperature`, `top_p` and `top_k`, which 2023-06-01 takes. Sent with the
 * key as `x-api-key`, as the SDKs speaking that version did.
 */
export const ANTHROPIC_SAMPLING_VERSION = "2023-06-01";

const PUBLIC: Record<WireProvider, { base: string; path: string }> = {
  anthropic: { base: "https://api.anthropic.com", path: "/v1/messages" },
  openai: { base: "https://api.openai.com/v1", path: "/chat/completions" },
};

/** A resolved endpoint: where to POST and with which headers. */
export interface Endpoint {
  /** Base URL, no trailing slash. */
  base: string;
  url: string;
  headers: Record<string, string>;
}

/** The base URL requests go to: `explicit` when given, else the public one (no trailing slash). */
export function baseUrl(provider: WireProvider, explicit?: string): string {
  return (explicit || PUBLIC[provider].base).replace(/\/+$/, "");
}

/**
 * The endpoint for `provider` at `base` (see `baseUrl`) with `key`.
 * @param missingKey what to tell the user when the public endpoint has no key
 * @param userAgent the `user-agent` header
 */
export function endpoint(
  provider: WireProvider,
  opts: {
    base?: string;
    key?: string;
    betas?: string[];
    /** Anthropic only: `ANTHROPIC_SAMPLING_VERSION` for a request with sampling parameters. */
    apiVersion?: string;
    missingKey: string;
    userAgent: string;
  },
): Endpoint {
  const base = baseUrl(provider, opts.base);
  const h: Record<string, string> = { "user-agent": opts.userAgent };
  if (
    opts.apiVersion !== undefined &&
    (provider !== "anthropic" || opts.apiVersion !== ANTHROPIC_SAMPLING_VERSION)
  ) {
    throw new LlmError(provider, `unknown API version '${opts.apiVersion}' for provider '${provider}'`);
  }
  const legacy = opts.apiVersion === ANTHROPIC_SAMPLING_VERSION;
  if (opts.key) {
    if (legacy) h["x-api-key"] = opts.key;
    else h.authorization = `Bearer ${opts.key}`;
  } else if (base === PUBLIC[provider].base) {
    throw new LlmError(provider, `no API key for provider '${provider}': ${opts.missingKey}`);
  }
  if (provider === "anthropic") {
    h["anthropic-version"] = opts.apiVersion ?? ANTHROPIC_VERSION;
    if (opts.betas?.length) h["anthropic-beta"] = opts.betas.join(",");
  }
  return { base, url: base + PUBLIC[provider].path, headers: h };
}
