/**
 * One call of a declared block (a tool call, a resource read, a prompt get) while its run goes
 * on, and `mcp.client`: what the block can ask of the client that called it.
 *
 * Owns:
 * - `mcp.client` (a host module installed into that run only, on first use):
 *   `progress(n, total?, message?)`, `log(level, data)`, `sample(params)`, `elicit(message,
 *   schema)`, `roots()` and `era()`. Progress and log are notifications on the current request;
 *   sample, elicit and roots are input requests.
 * - Input requests in both protocol eras through one path: the run waits, the handler returns the
 *   protocol's `input_required` result with the request and a `requestState` naming this call;
 *   the client (2026-07-28) or the SDK's legacy shim (2025 era: it sends the real
 *   `sampling/createMessage`, `elicitation/create` or `roots/list` and re-enters the handler)
 *   answers it; the re-entered handler finds the call by its state (`CallTable`), hands the answer
 *   to the waiting block, and waits for the next stop (the result, or another input request). The
 *   run is one run throughout: one kernel session, one record.
 * - Cancellation: the current request's signal aborts the run (a cancelled call stops the block
 *   within one host call). Between rounds of a 2026-07-28 call no request is in flight; a call
 *   whose client does not come back within `suspendTimeoutMs` is ended.
 *
 * Invariants: a block never waits on an input request the client cannot answer — a missing
 * capability (`sampling`, `elicitation`, `roots`) is a Lua error at the call, raised before
 * anything is sent; a call state is a random UUID known only to the client it was given to; a
 * finished or ended call is removed from the table at once.
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import type { HostModule } from "../host/context.ts";

/** What a block's run ended with, as the handler needs it. */
export type CallStop =
  | { kind: "done"; value: unknown }
  | { kind: "input"; key: string; request: { method: string; params?: Record<string, unknown> } };

/** The client capabilities that matter to `mcp.client`. */
export interface ClientAbilities {
  sampling: boolean;
  elicitation: boolean;
  roots: boolean;
}

const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** One call in flight. */
export class CallSession {
  readonly id: string = crypto.randomUUID();
  readonly abort: AbortController = new AbortController();
  #ctx: ServerContext;
  #abilities: ClientAbilities;
  #seq = 0;
  #stops: CallStop[] = [];
  #waiter: ((s: CallStop) => void) | undefined;
  #pending: { key: string; resolve: (v: unknown) => void; reject: (e: Error) => void } | undefined;
  #detach: (() => void) | undefined;
  #expiry: ReturnType<typeof setTimeout> | undefined;
  #progressToken: string | number | undefined;

  constructor(ctx: ServerContext, abilities: ClientAbilities, progressToken: string | number | undefined) {
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
   * the answer to the pending input request goes to the block.
   */
  resume(ctx: ServerContext, progressToken: string | number | undefined): void {
    clearTimeout(this.#expiry);
    if (ctx.mcpReq.signal !== this.#ctx.mcpReq.signal) this.#follow(ctx.mcpReq.signal);
    this.#ctx = ctx;
    if (progressToken !== undefined) this.#progressToken = progressToken;
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    const answer = ctx.mcpReq.inputResponses?.[p.key];
    if (answer === undefined) {
      p.reject(new Error(`mcp.client: the client did not answer input request '${p.key}'`));
    } else p.resolve(answer);
  }

  /**
   * The call is waiting for its client between rounds: with no request in flight (2026-07-28),
   * the previous request's signal is no longer followed, and the call ends after `ms`.
   */
  suspend(ms: number, onExpire: () => void): void {
    if (this.#ctx.mcpReq.envelope) {
      this.#detach?.();
      this.#detach = undefined;
    }
    this.#expiry = setTimeout(() => {
      this.abort.abort("the client did not answer an input request in time");
      onExpire();
    }, ms);
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

  /** Asks the client (an input request); resolves with its answer. */
  #ask(method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<unknown> {
    if (this.#pending) return Promise.reject(new Error("mcp.client: one request to the client at a time"));
    const key = `r${++this.#seq}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error("the call was cancelled"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.#pending = {
        key,
        resolve: (v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      this.#push({ kind: "input", key, request: params ? { method, params } : { method } });
    });
  }

  /** The `mcp.client` host module of this call's run. */
  module(): HostModule {
    return (engine) =>
      engine.defineLazy({ tables: ["mcp.client"] }, () => {
        const need = (what: keyof ClientAbilities, fn: string) => {
          if (!this.#abilities[what]) {
            throw new Error(`mcp.client.${fn}: the calling client did not declare the '${what}' capability`);
          }
        };
        engine.define("mcp.client.era", { sync: () => this.era });
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
            need("sampling", "sample");
            const p = a.at(1);
            let params: Record<string, unknown>;
            if (typeof p === "string") {
              params = { messages: [{ role: "user", content: { type: "text", text: p } }], maxTokens: 1000 };
            } else params = a.table(1, "params");
            if (params.maxTokens === undefined) params = { ...params, maxTokens: 1000 };
            return await this.#ask("sampling/createMessage", params, cx.signal);
          },
        });
        engine.define("mcp.client.elicit", {
          async: async (a, cx) => {
            need("elicitation", "elicit");
            const message = a.string(1, "message");
            const schema = a.optTable(2, "schema") ?? { type: "object", properties: {} };
            return await this.#ask(
              "elicitation/create",
              { mode: "form", message, requestedSchema: schema },
              cx.signal,
            );
          },
        });
        engine.define("mcp.client.roots", {
          async: async (_a, cx) => {
            need("roots", "roots");
            const r = await this.#ask("roots/list", undefined, cx.signal) as { roots?: unknown[] };
            return r?.roots ?? [];
          },
        });
      });
  }
}

/** The calls waiting for their client between rounds, by state. */
export class CallTable {
  readonly #calls = new Map<string, CallSession>();

  add(c: CallSession): void {
    this.#calls.set(c.id, c);
  }

  take(id: string): CallSession | undefined {
    const c = this.#calls.get(id);
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
