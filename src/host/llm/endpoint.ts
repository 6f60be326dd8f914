/**
 * Which base URL and key a model request of a run uses.
 *
 * Owns the resolution order, the same as the official SDKs': base URL from `opts.base_url`, else
 * `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` of the run's environment, else the public endpoint;
 * key from `opts.api_key`, else the variable `opts.api_key_env` names, else `ANTHROPIC_API_KEY` /
 * `OPENAI_API_KEY`. The variables are read from the run's environment (`RunEnv`), never from the
 * process; empty counts as unset. The headers and the refusal of a public endpoint without a key
 * are the client's (`src/clients/llm/endpoint.ts`).
 */
import { baseUrl, type Endpoint, endpoint } from "../../clients/llm/endpoint.ts";
import type { WireProvider } from "../../clients/llm/errors.ts";
import type { RunEnv } from "../../run_env.ts";
import { VERSION } from "../../version.ts";

const VARS: Record<WireProvider, { base: string; key: string }> = {
  anthropic: { base: "ANTHROPIC_BASE_URL", key: "ANTHROPIC_API_KEY" },
  openai: { base: "OPENAI_BASE_URL", key: "OPENAI_API_KEY" },
};

const USER_AGENT = `agent-block/${VERSION}`;

/** How a script asks to reach a provider. */
export interface EndpointOptions {
  base_url?: string;
  api_key?: string;
  api_key_env?: string;
}

function nonEmpty(env: RunEnv, name: string): string | undefined {
  const v = env.get(name);
  return v === undefined || v === "" ? undefined : v;
}

/** The base URL requests go to (no trailing slash). */
export function resolveBaseUrl(env: RunEnv, provider: WireProvider, opts: EndpointOptions): string {
  return baseUrl(provider, opts.base_url || nonEmpty(env, VARS[provider].base));
}

/** URL and headers of a request; throws an `LlmError` when a needed key is missing. */
export function resolveEndpoint(
  env: RunEnv,
  provider: WireProvider,
  opts: EndpointOptions,
  betas: string[] = [],
  apiVersion?: string,
): Endpoint {
  const keyVar = opts.api_key_env || VARS[provider].key;
  return endpoint(provider, {
    base: opts.base_url || nonEmpty(env, VARS[provider].base),
    key: opts.api_key || nonEmpty(env, keyVar),
    betas,
    apiVersion,
    missingKey: `set ${keyVar}${opts.api_key_env ? "" : " or pass api_key / api_key_env"}`,
    userAgent: USER_AGENT,
  });
}
