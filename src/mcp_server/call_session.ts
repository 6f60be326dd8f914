/**
 * One call of a declared block (a tool call, a resource read, a prompt get) while its run goes
 * on, and `mcp.client`: what the block can ask of the client that called it.
 *
 * Owns:
 * - `mcp.client` (a host module installed into that run only, on first use):
 *   `progress(n, total?, message?)`, `log(level, data)`, `sample(params)`, `elicit(message,
 *   schema)`, `roots()`, `ask(requests)` (several requests in one round, under keys the block
 *   names), `capabilities()` and `era()`. Progress and log are notifications on the current
 *   request; sample, elicit, roots and ask are input requests.
 * - Input requests in both protocol eras through one path: the run waits, the handler returns the
 *   protocol's `input_required` result with the request and a `requestState` naming this call;
 *   the client (2026-07-28) or the SDK's legacy shim (2025 era: it sends the real
 *   `sampling/createMessage`, `elicitation/create` or `roots/list` and re-enters the handler)
 *   answers it; the re-entered handler finds the call by its state (`CallTable`; a fresh random
 *   state every round, so a state is good for one answer), hands the answers to the waiting
 *   block — or, when some are missing, asks for those again — and waits for the next stop (the
 *   result, or another input request). The run is one run throughout.
 * - Cancellation: the current request's signal aborts the run (a cancelled call stops the block
 *   within one host call). Between rounds of a 2026-07-28 call no request is in flight; a call
 *   whose client does not come back within `suspendTimeoutMs` is ended.
 *
 * Invariants: a block never waits on an input request the client cannot answer — a missing
 * capability (`sampling`, `elicitation`, `roots`) is a Lua error at the call, raised before
 * anything is sent (uncaught, the call fails with -32021 in the 2026-07-28 era, an error result
 * in the 2025 era); a call state is a random UUID known only to the client it was given to,
 * anything else echoed is refused (-32602); a finished or ended call is removed from the table.
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import type { HostModule } from "../host/context.ts";

/** One request to the client, as an `input_required` result carries it. */
export interface InputAsk {
  method: string;
  params?: Record<string, unknown>;
}

/** What a block's run ended with, as the handler needs it. */
export type CallStop =
  | { kind: "done"; value: unknown }
  | { kind: "input"; requests: Record<string, InputAsk> };

/** The client capabilities that matter to `mcp.client`. */
export interface ClientAbilities {
  sampling: boolean;
  elicitation: boolean;
  roots: boolean;
  /** Everything the client declared (`mcp.client.capabilities()`). */
  declared: Record<string, unknown>;
}

const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const ABILITY_OF: Record<string, keyof Omit<ClientAbilities, "declared"> | undefined> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/** A block asked for what its client did not declare: the capability (the call then fails with -32021). */
export class MissingCapability extends Error {
  constructor(readonly capability: string, fn: string) {
    super(`mcp.client.${fn}: the calling client did not declare the '${capability}' capability`);
  }
}

/** One call in flight. */
export class CallSession {
  readonly abort: AbortController = new AbortController();
  /** The state the client echoes for the current round (a fresh one every round). */
  state: string = crypto.randomUUID();
  /** Set when the block asked for a capability the client lacks (the call's error then says so). */
  missingCapability: string | undefined;
  #ctx: ServerContext;
  #abilities: ClientAbilities;
  #seq = 0;
  #stops: CallStop[] = [];
  #waiter: ((s: CallStop) => void) | undefined;
  #pending:
    | {
      requests: Record<string, InputAsk>;
      answers: Record<string, unknown>;
      resolve: (v: Record<string, unknown>) => void;
      reject: (e: Error) => void;
    }
    | undefined;
  #detach: (() => void) | undefined;
  #expiry: ReturnType<typeof setTimeout> | undefined;
  #progressToken: string | number | undefined;

  /**
   * What the call is of (`tool add`, `prompt greet`, `resource test://x`): a state echoed with
   * another request than the one it was given for is refused.
   */
  readonly owner: string;

  constructor(
    ctx: ServerContext,
    abilities: ClientAbilities,
    progressToken: string | number | undefined,
    owner = "",
  ) {
    this.owner = owner;
    this.#ctx = ctx;
    this.#abilities = abilities;
    this.#progressToken = progressToken;
    this.#follow(ctx.mcpReq.signal);
  }

  /** The era of the call's client: "2026-07-28" when its requests carry the envelope, else "2025". */
  get era(): string {
    return this.#ctx.mcpReq.envelope ? "2026-07-28" : "2025";
  }

  /** Follows `signal` (the current request's): its abort cancels the run. */
  #follow(signal: AbortSignal): void {
    this.#detach?.();
    const onAbort = () => this.abort.abort("the client cancelled the call");
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    this.#detach = () => signal.removeEventListener("abort", onAbort);
  }

  /**
   * A later round of the call (a re-entered handler): its context becomes the current one, and
   * the answers it carries go to the pending requests; the block resumes once all are answered.
   */
  resume(ctx: ServerContext, progressToken: string | number | undefined): void {
    clearTimeout(this.#expiry);
    if (ctx.mcpReq.signal !== this.#ctx.mcpReq.signal) this.#follow(ctx.mcpReq.signal);
    this.#ctx = ctx;
    if (progressToken !== undefined) this.#progressToken = progressToken;
    const p = this.#pending;
    if (!p) return;
    const given = ctx.mcpReq.inputResponses ?? {};
    for (const key of Object.keys(p.requests)) {
      if (given[key] !== undefined && p.answers[key] === undefined) p.answers[key] = given[key];
    }
    if (this.unanswered()) return;
    this.#pending = undefined;
    p.resolve(p.answers);
  }

  /** The requests of the current round still unanswered (after a resume missing some), or undefined. */
  unanswered(): Record<string, InputAsk> | undefined {
    const p = this.#pending;
    if (!p) return undefined;
    const left = Object.entries(p.requests).filter(([k]) => p.answers[k] === undefined);
    return left.length ? Object.fromEntries(left) : undefined;
  }

  /**
   * The call is waiting for its client between rounds, under a fresh state: with no request in
   * flight (2026-07-28), the previous request's signal is no longer followed, and the call ends
   * after `ms`.
   */
  suspend(ms: number, onExpire: () => void): string {
    this.state = crypto.randomUUID();
    if (this.#ctx.mcpReq.envelope) {
      this.#detach?.();
      this.#detach = undefined;
    }
    this.#expiry = setTimeout(() => {
      this.abort.abort("the client did not answer an input request in time");
      onExpire();
    }, ms);
    return this.state;
  }

  /** The run ended (its value: a returned string, a result table, or an error). */
  finish(value: unknown): void {
    clearTimeout(this.#expiry);
    this.#detach?.();
    this.#pending?.reject(new Error("the call has ended"));
    this.#pending = undefined;
    this.#push({ kind: "done", value });
  }

  /** The next stop of the run: its end, or an input request. */
  next(): Promise<CallStop> {
    const s = this.#stops.shift();
    if (s) return Promise.resolve(s);
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  #push(s: CallStop): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    if (w) w(s);
    else this.#stops.push(s);
  }

  /** Asks the client (one round of input requests); resolves with the answers by key. */
  #ask(
    requests: Record<string, InputAsk>,
    signal: AbortSignal,
    fn: string,
  ): Promise<Record<string, unknown>> {
    if (this.#pending) {
      return Promise.reject(new Error(`mcp.client.${fn}: one round of requests to the client at a time`));
    }
    for (const r of Object.values(requests)) {
      const need = ABILITY_OF[r.method];
      if (!need) {
        return Promise.reject(
          new Error(
            `mcp.client.${fn}: '${r.method}' is not a request a server can send (elicitation/create, sampling/createMessage, roots/list)`,
          ),
        );
      }
      if (!this.#abilities[need]) {
        this.missingCapability = need;
        return Promise.reject(new MissingCapability(need, fn));
      }
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error("the call was cancelled"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.#pending = {
        requests,
        answers: {},
        resolve: (v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      this.#push({ kind: "input", requests });
    });
  }

  async #askOne(ask: InputAsk, signal: AbortSignal, fn: string): Promise<unknown> {
    const key = `${fn}_${++this.#seq}`;
    return (await this.#ask({ [key]: ask }, signal, fn))[key];
  }

  /** The `mcp.client` host module of this call's run. */
  module(): HostModule {
    return (engine) =>
      engine.defineLazy({ tables: ["mcp.client"] }, () => {
        engine.define("mcp.client.era", { sync: () => this.era });
        engine.define("mcp.client.capabilities", { sync: () => this.#abilities.declared });
        engine.define("mcp.client.progress", {
          sync: (a) => {
            const progress = a.number(1, "progress");
            const total = a.optNumber(2, "total");
            const message = a.optString(3, "message");
            if (this.#progressToken === undefined) return false;
            void this.#ctx.mcpReq.notify({
              method: "notifications/progress",
              params: {
                progressToken: this.#progressToken,
                progress,
                ...(total !== undefined ? { total } : {}),
                ...(message !== undefined ? { message } : {}),
              },
            }).catch(() => undefined);
            return true;
          },
        });
        engine.define("mcp.client.log", {
          async: async (a) => {
            const level = a.string(1, "level");
            if (!LOG_LEVELS.includes(level)) {
              a.fail(1, "level", `one of ${LOG_LEVELS.join(", ")}`, `'${level}'`);
            }
            const data = a.at(2);
            const logger = a.optString(3, "logger");
            await this.#ctx.mcpReq.log(level as "info", data ?? null, logger).catch(() => undefined);
          },
        });
        engine.define("mcp.client.sample", {
          async: async (a, cx) => {
            const p = a.at(1);
            let params: Record<string, unknown>;
            if (typeof p === "string") {
              params = { messages: [{ role: "user", content: { type: "text", text: p } }], maxTokens: 1000 };
            } else params = a.table(1, "params");
            if (params.maxTokens === undefined) params = { ...params, maxTokens: 1000 };
            return await this.#askOne({ method: "sampling/createMessage", params }, cx.signal, "sample");
          },
        });
        engine.define("mcp.client.elicit", {
          async: async (a, cx) => {
            const message = a.string(1, "message");
            const schema = a.optTable(2, "schema") ?? { type: "object", properties: {} };
            return await this.#askOne(
              { method: "elicitation/create", params: { mode: "form", message, requestedSchema: schema } },
              cx.signal,
              "elicit",
            );
          },
        });
        engine.define("mcp.client.roots", {
          async: async (_a, cx) => {
            const r = await this.#askOne({ method: "roots/list" }, cx.signal, "roots") as {
              roots?: unknown[];
            };
            return r?.roots ?? [];
          },
        });
        engine.define("mcp.client.ask", {
          async: async (a, cx) => {
            const t = a.table(1, "requests");
            const requests: Record<string, InputAsk> = {};
            for (const [k, v] of Object.entries(t)) {
              const r = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
              if (typeof r.method !== "string") {
                a.fail(
                  1,
                  "requests",
                  "a table of {method = ..., params = ...} by key",
                  `'${k}' = ${typeof v}`,
                );
              }
              requests[k] = r.params === undefined
                ? { method: r.method as string }
                : { method: r.method as string, params: r.params as Record<string, unknown> };
            }
            if (Object.keys(requests).length === 0) a.fail(1, "requests", "at least one request");
            return await this.#ask(requests, cx.signal, "ask");
          },
        });
      });
  }
}

/** Calls waiting for their client at most (`CallTable`'s default bound). */
export const MAX_WAITING_CALLS = 256;

/**
 * The calls waiting for their client between rounds, by state. Bounded: a client that starts
 * calls which ask it something and never answers cannot pile up runs; past `max`, the call
 * waiting longest is ended (its run cancelled) to make room.
 */
export class CallTable {
  readonly #calls = new Map<string, CallSession>();

  constructor(private readonly max: number = MAX_WAITING_CALLS) {}

  add(c: CallSession): void {
    while (this.#calls.size >= this.max) {
      const [state, oldest] = this.#calls.entries().next().value as [string, CallSession];
      this.#calls.delete(state);
      oldest.abort.abort(
        `too many calls waiting for their client (${this.max}): the one waiting longest was ended`,
      );
    }
    this.#calls.set(c.state, c);
  }

  /** The call waiting under state `id`, taken out of the table, if it is `owner`'s. */
  take(id: string, owner?: string): CallSession | undefined {
    const c = this.#calls.get(id);
    if (!c || (owner !== undefined && c.owner !== owner)) return undefined;
    this.#calls.delete(id);
    return c;
  }

  delete(id: string): void {
    this.#calls.delete(id);
  }

  get size(): number {
    return this.#calls.size;
  }
}
