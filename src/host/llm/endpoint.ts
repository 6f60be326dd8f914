/**
 * Where a provider's requests go and with which credentials.
 *
 * Owns the resolution order, the same as the official SDKs': base URL from `opts.base_url`, else
 * `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, else the public endpoint (Anthropic's root has no
 * `/v1`, the path adds it; OpenAI's root has it); key from `opts.api_key`, else the variable
 * `opts.api_key_env` names, else `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`; and the auth headers
 * the pinned SDKs send (`@anthropic-ai/sdk` 1.x: `authorization: Bearer` and `anthropic-version:
 * 2026-10-21`; `openai`: `authorization: Bearer`).
 *
 * Invariant: a public endpoint without a key is refused before any request; a custom base URL
 * (a local vLLM, llama.cpp or Ollama) may go without one.
 */
import { VERSION } from "../../version.ts";
import type { WireProvider } from "./transport.ts";

/** The `anthropic-version` header, as `@anthropic-ai/sdk` 1.14 sends it. */
export const ANTHROPIC_VERSION = "2026-10-21";

const DEFAULTS: Record<WireProvider, { base: string; baseEnv: string; keyEnv: string; path: string }> = {
  anthropic: {
    base: "https://api.anthropic.com",
    baseEnv: "ANTHROPIC_BASE_URL",
    keyEnv: "ANTHROPIC_API_KEY",
    path: "/v1/messages",
  },
  openai: {
    base: "https://api.openai.com/v1",
    baseEnv: "OPENAI_BASE_URL",
    keyEnv: "OPENAI_API_KEY",
    path: "/chat/completions",
  },
};

/** How to reach a provider. */
export interface EndpointOptions {
  base_url?: string;
  api_key?: string;
  api_key_env?: string;
}

function env(name: string): string | undefined {
  const v = Deno.env.get(name);
  return v === undefined || v === "" ? undefined : v;
}

/** The base URL requests go to (no trailing slash). */
export function baseUrl(provider: WireProvider, opts: EndpointOptions): string {
  const d = DEFAULTS[provider];
  return (opts.base_url || env(d.baseEnv) || d.base).replace(/\/+$/, "");
}

/** The full endpoint URL. */
export function endpointUrl(provider: WireProvider, opts: EndpointOptions): string {
  return baseUrl(provider, opts) + DEFAULTS[provider].path;
}

/** The request headers (auth, version, user agent, betas); throws when a needed key is missing. */
export function authHeaders(
  provider: WireProvider,
  opts: EndpointOptions,
  betas: string[] = [],
): Record<string, string> {
  const d = DEFAULTS[provider];
  const keyEnv = opts.api_key_env || d.keyEnv;
  const key = opts.api_key || env(keyEnv);
  const base = baseUrl(provider, opts);
  const h: Record<string, string> = { "user-agent": `agent-block/${VERSION}` };
  if (key) h.authorization = `Bearer ${key}`;
  else if (base === d.base) {
    throw new Error(
      `llm: no API key for provider '${provider}': set ${keyEnv}${
        opts.api_key_env ? "" : " or pass api_key / api_key_env"
      }`,
    );
  }
  if (provider === "anthropic") {
    h["anthropic-version"] = ANTHROPIC_VERSION;
    if (betas.length) h["anthropic-beta"] = betas.join(",");
  }
  return h;
}
