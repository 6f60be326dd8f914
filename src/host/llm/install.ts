/**
 * The `llm` host module: the TypeScript half of model access, handed to Lua.
 *
 * Owns six internal functions (not globals): `@llm_send` (one request through the transport,
 * resolving endpoint and credentials here so keys never have to pass through Lua), `@llm_encode`
 * and `@llm_release` (messages shipped by id to the JSON writer, and let go), `@llm_base_url`
 * (the resolved base URL, from which `llm_proto` infers the dialect), `@llm_read_replay` (a
 * replay script read relative to the script's directory, then the project root) and `@llm_env`
 * (the run environment's model variables). `llm.lua`
 * publishes them to Lua as `require("llm_proto.transport")` and defines `llm.chat` on top of
 * the provider Ports of `llm_proto.port`. The transport (the Lua-free client in
 * `src/clients/llm/`: `transport.ts` and its stream parsers) is imported on the first `llm_send`,
 * not at start-up.
 *
 * Everything the client needs comes from the run: base URL and key resolved against the run's
 * environment (`endpoint.ts`), the default `max_response_bytes` (`run.settings`: the edge read
 * `AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES` when the run started), whether the sandbox turned TCP off
 * (`run.settings.sandboxTcpOff`: a refused connection's error says so), the correlation ids of its obs lines (`correlation(run.correlation)`), its logger. A
 * failed request reaches Lua as an error table `{ message = "llm: ...", source = "llm",
 * provider, status, retryable, retry_after_ms? }` (`tostring(e)` is the message, the text it always had),
 * built only on the error path: a turn that succeeds converts nothing more than before. The key a
 * request sends joins the run's secrets (`run.secrets`), and the message is scrubbed of them and
 * of URL credentials before Lua sees it, so an error body that echoes the key is not recorded or
 * printed with it. A traced run's requests go through its trace's `modelFetch` (`traceparent` out,
 * `server.address`, time to the first chunk; `src/obs/otel/run_trace.ts`).
 */
import { isAbsolute, join } from "node:path";
import type { LuaEngine } from "../../lua/engine.ts";
import { LuaCallbackError, LuaErrorTable } from "../../lua/engine.ts";
import type { Args } from "../../lua/args.ts";
import { LuaMulti, NullsAsNil } from "../../json/values.ts";
import { correlation } from "../../obs/ab_obs.ts";
import type { Secrets } from "../../obs/secrets.ts";
import type { RunContext } from "../context.ts";
import { type EndpointOptions, resolveBaseUrl, resolveEndpoint } from "./endpoint.ts";
import { LlmError, type WireProvider } from "../../clients/llm/errors.ts";
import { Deadlines } from "../../clients/llm/deadlines.ts";
import { DEFAULT_COMMIT_WINDOW_MS } from "../../knl/commit_window.ts";
import { JoinedMessages } from "./joined_messages.ts";
import llmSource from "./llm.lua" with { type: "text" };

function wireProvider(a: Args, v: unknown): WireProvider {
  if (v === "anthropic" || v === "openai") return v;
  throw new Error(`${a.fn}: field 'provider' must be "anthropic" or "openai", got ${JSON.stringify(v)}`);
}

function endpointOpts(a: Args, t: Record<string, unknown>): EndpointOptions {
  const out: EndpointOptions = {};
  for (const k of ["base_url", "api_key", "api_key_env"] as const) {
    const v = t[k];
    if (v === undefined) continue;
    if (typeof v !== "string") throw new Error(`${a.fn}: field '${k}' must be a string, got ${typeof v}`);
    out[k] = v;
  }
  return out;
}

function num(a: Args, t: Record<string, unknown>, k: string, dflt: number): number {
  const v = t[k];
  if (v === undefined) return dflt;
  const n = typeof v === "bigint" ? Number(v) : Number(v);
  if (typeof v === "string" || !Number.isFinite(n) || n < 0) {
    throw new Error(`${a.fn}: field '${k}' must be a non-negative number, got ${String(v)}`);
  }
  return n;
}

/**
 * `max_response_bytes` of a request: the field, else the run's `settings.llmMaxResponseBytes`
 * (`AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES`, parsed at the edge), else the transport's default
 * (undefined). A malformed field is an error naming it.
 */
function maxResponseBytes(a: Args, t: Record<string, unknown>, run: RunContext): number | undefined {
  const v = t.max_response_bytes;
  if (v !== undefined) {
    const n = typeof v === "bigint" ? Number(v) : v;
    if (typeof n !== "number" || !Number.isInteger(n) || n <= 0) {
      throw new Error(
        `${a.fn}: field 'max_response_bytes' must be a positive whole number of bytes, got ${String(v)}`,
      );
    }
    return n;
  }
  return run.settings.llmMaxResponseBytes;
}

/**
 * A failed request as the error table Lua receives (see the module header), its message scrubbed
 * of the run's secrets and of credentials in URLs: a server's error body may echo the key.
 */
function llmErrorTable(e: LlmError, secrets: Secrets): LuaErrorTable {
  const fields: Record<string, unknown> = {
    source: "llm",
    provider: e.provider,
    status: e.status,
    retryable: e.retryable,
  };
  if (e.retryAfterMs !== undefined) fields.retry_after_ms = e.retryAfterMs;
  return new LuaErrorTable(`llm: ${secrets.scrub(e.message)}`, fields);
}

/** Installs the llm host functions and `llm.chat`. */
export function installLlm(engine: LuaEngine, run: RunContext): void {
  // Wire messages and tool lists encoded once, to UTF-8 JSON bytes, and referred to by id: a loop
  // that resends its history neither moves it across the Lua boundary again every turn nor
  // encodes it again (the transport copies the bytes into the body). Lua frees an id when the
  // value it encodes is collected (a __gc handle in llm_proto.port).
  const texts = new Map<number, Uint8Array>();
  const utf8 = new TextEncoder();
  let nextText = 0;
  engine.define("@llm_encode", {
    pure: true,
    raw: (L) => {
      const bytes = utf8.encode(engine.toJson(L, 1));
      const id = ++nextText;
      texts.set(id, bytes);
      engine.api.pushinteger(L, BigInt(id));
      return 1;
    },
  });
  // A conversation's encoded wire messages, in order (`llm_proto.port`'s chains): each request
  // updates it with what the turn changed (`@llm_chain_update`: keep the first `keep`, append the
  // turn's messages) and names it (`raw_chain`), so the history never crosses the boundary again.
  const chains = new Map<number, JoinedMessages>();
  engine.define("@llm_chain_new", {
    pure: true,
    sync: () => {
      const id = ++nextText;
      chains.set(id, new JoinedMessages());
      return id;
    },
  });
  engine.define("@llm_chain_update", {
    pure: true,
    // (chain, keep, messages): keeps the first `keep`, appends `messages` encoded here, one by one
    // (no handle per message: the chain holds the bytes)
    raw: (L) => {
      const api = engine.api;
      api.settop(L, 3);
      const id = Number(api.tointeger(L, 1));
      const keep = Number(api.tointeger(L, 2));
      const chain = chains.get(id);
      if (chain === undefined) throw new Error(`llm_chain_update: chain ${id} is not live`);
      const added: Uint8Array[] = [];
      for (let i = 1, n = api.rawlen(L, 3); i <= n; i++) {
        api.rawgeti(L, 3, i);
        added.push(utf8.encode(engine.toJson(L, 4)));
        api.settop(L, 3);
      }
      try {
        chain.update(keep, added);
      } catch (e) {
        throw new Error(`llm_chain_update: chain ${id}: ${(e as Error).message}`);
      }
      return 0;
    },
  });
  engine.define("@llm_release", {
    pure: true,
    sync: (a) => {
      const id = a.integer(1, "id");
      texts.delete(id);
      chains.delete(id);
    },
  });
  const textOf = (a: Args, v: unknown): Uint8Array => {
    const s = texts.get(Number(v));
    if (s === undefined) throw new Error(`${a.fn}: encoded text ${String(v)} is not live`);
    return s;
  };

  /** A chain by id, or an error naming it. */
  const chainOf = (a: Args, v: unknown): JoinedMessages => {
    const c = chains.get(Number(v));
    if (c === undefined) throw new Error(`${a.fn}: chain ${String(v)} is not live`);
    return c;
  };

  engine.define("@llm_base_url", {
    pure: true,
    sync: (a) => {
      const t = a.table(1, "opts");
      return resolveBaseUrl(run.env, wireProvider(a, t.provider), endpointOpts(a, t));
    },
  });

  let transportModule: typeof import("../../clients/llm/transport.ts") | undefined; // loaded once, on first use
  const ids = () => correlation(run.correlation);
  // A traced run's model requests carry `traceparent` and tell the trace their server and first chunk.
  const llmFetch = run.trace
    ? run.trace.modelFetch(
      run.llmFetch ?? ((input, init) => fetch(input, init)),
      (t) => run.secrets.maskJson(t),
    )
    : run.llmFetch;
  // The run's request timeouts share one timer, stopped with the run.
  const deadlines = new Deadlines();
  run.onCleanup(() => deadlines.stop());
  engine.define("@llm_send", {
    functions: "ref",
    // A request is not an act the kernel's log must precede (asking again is harmless): with a
    // commit window, what a beat deferred commits while the request is in flight.
    deferCommit: (run.settings.knlCommitMs ?? DEFAULT_COMMIT_WINDOW_MS) > 0,
    async: async (a, cx) => {
      const t = a.table(1, "request");
      const onDelta = a.optFunc(2, "on_delta");
      // the conversation's joined messages, held unchanged until this request is done
      const chain = t.raw_chain !== undefined ? chainOf(a, t.raw_chain) : undefined;
      const joined = chain?.view();
      try {
        const provider = wireProvider(a, t.provider);
        const betas = Array.isArray(t.betas) ? t.betas.map(String) : [];
        const apiVersion = typeof t.api_version === "string" ? t.api_version : undefined;
        const ep = resolveEndpoint(run.env, provider, endpointOpts(a, t), betas, apiVersion);
        // The key this request sends, wherever it came from, is one of the run's secrets.
        run.secrets.addHeaders(ep.headers);
        run.secrets.addUrl(ep.url);
        // Loaded on the first request: a run that never calls a model does not load the
        // transport and its stream parsers (listed in deno.json's compile.include).
        const { sendLlmRequest } = transportModule ??
          (transportModule = await import("../../clients/llm/transport.ts"));
        const res = await sendLlmRequest({
          provider,
          url: ep.url,
          headers: ep.headers,
          body: t.body,
          // one chunk holding every message, commas included
          rawMessages: joined !== undefined
            ? [joined]
            : Array.isArray(t.raw_messages)
            ? t.raw_messages.map((id) => textOf(a, id))
            : undefined,
          rawTools: t.raw_tools !== undefined ? textOf(a, t.raw_tools) : undefined,
          timeoutSecs: num(a, t, "timeout", 120),
          maxResponseBytes: maxResponseBytes(a, t, run),
          maxRetries: Math.floor(num(a, t, "max_retries", 2)),
          stream: t.stream === true,
          onDelta: onDelta
            ? async (d) => {
              try {
                await engine.callLua(onDelta, [d]);
              } catch (e) {
                const why = e instanceof LuaCallbackError ? e.message : String(e);
                throw new LlmError(provider, `on_delta raised: ${why}`);
              }
            }
            : undefined,
          signal: cx.signal,
          fetch: llmFetch,
          deadlines,
          correlation: ids,
          obs: (level, line) => {
            if (run.log.enabled(level)) run.log.log(level, line());
          },
        });
        return new LuaMulti([
          new NullsAsNil(res.body),
          { status: res.status, attempts: res.attempts, latency_ms: res.latencyMs },
        ]);
      } catch (e) {
        if (e instanceof LlmError && e.denied && run.settings.sandboxTcpOff) {
          throw llmErrorTable(
            new LlmError(
              e.provider,
              `${e.message}: denied by the sandbox (AGENT_BLOCK_SANDBOX_TCP=0 allows no TCP connection)`,
              { denied: true },
            ),
            run.secrets,
          );
        }
        throw e instanceof LlmError ? llmErrorTable(e, run.secrets) : e;
      } finally {
        onDelta?.release();
        if (joined !== undefined) chain!.release(joined);
      }
    },
  });

  engine.define("@llm_read_replay", {
    sync: (a) => {
      const p = a.string(1, "path");
      const candidates = isAbsolute(p) ? [p] : [join(run.scriptDir, p), join(run.projectRoot, p)];
      for (const c of candidates) {
        try {
          return new LuaMulti([Deno.readTextFileSync(c), c]);
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) {
            throw new Error(`replay: cannot read '${c}': ${(e as Error).message}`);
          }
        }
      }
      throw new Error(`replay: script '${p}' not found (looked in ${candidates.join(", ")})`);
    },
  });

  engine.define("@llm_env", {
    sync: (a) => {
      const v = run.env.get(a.string(1, "name"));
      return v === "" ? undefined : v;
    },
  });

  engine.exec(llmSource, "=ab:llm");
}
