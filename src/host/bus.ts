/**
 * `bus.*` and its TypeScript seam: events between the script, its own tasks and the embedder.
 *
 * Owns one bus per run: the handler tables (Lua handlers from `bus.on`/`bus.on_any`,
 * TypeScript handlers an embedder registers with `BusHost.on`/`onAny`), the queue of events
 * waiting for `bus.serve`, and dispatch. `BusHost` is the embedder's face (stable API); the
 * engine side (`BusCore`: attach, Lua handlers, serve, the artifact tap) stays internal, reached
 * through `busCore(host)`, so the public type names nothing of the engine.
 *
 * Routing, decided when an event is emitted and again when it is dispatched:
 *   Lua handler for the kind > TypeScript handler for the kind > `bus.on_any` > `BusHost.onAny`.
 * An event whose winner is a TypeScript handler is delivered at once (no `bus.serve` needed,
 * so an embedder sees `bus.emit("result", r)` of a script that never serves). Everything else
 * waits in the queue until the script runs `bus.serve`, which dispatches one event at a time, in
 * emission order, each Lua handler running as a task of its own (`engine.callLua`: an ordinary
 * Lua function with its closures; it may make host calls, emit, or call `bus.stop`).
 *
 * Invariants:
 * - The queue is unbounded: `bus.emit` never blocks (the original blocked forever past 64).
 * - A handler receives `{ kind, id, payload, meta }`; its first return value is the event's ack,
 *   which a TypeScript emitter awaits (`BusHost.emit` resolves with it, rejects with the
 *   handler's error, with "no handler for kind" when nothing claims it at dispatch, and with
 *   "the run ended" when the run ends first).
 * - A failing handler is logged as a warning and does not stop `bus.serve`.
 * - `bus.serve()` returns after `bus.stop()` (the handler in flight finishes first), or with
 *   `{ until_idle = true }` once no event is queued and no handler runs. Queued events survive a
 *   stop and go to the next `bus.serve`.
 * - `autoServe` (the SDK's `autoServeBus`): a background dispatcher serves Lua handlers from the
 *   start, so no `bus.serve` is needed; `bus.serve({ until_idle = true })` then waits until it is
 *   idle, a plain `bus.serve()` is refused and `bus.stop()` does nothing. An event no handler
 *   claims yet waits in the queue until one registers. Events still queued when the main chunk
 *   returns are not dispatched (their acks reject), as without it.
 * - When the run ends, TypeScript handlers still running get `10 × grace` to finish.
 * - TypeScript sees plain values: the integral floats `bus.emit` tags (so that a Lua handler gets
 *   `3.0` back as a float) arrive at TypeScript handlers and the tap as numbers.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { optField } from "../lua/args.ts";
import { LuaFloat, type LuaFunctionRef } from "../json/values.ts";
import type { HostModule, RunContext } from "./context.ts";

/**
 * What a handler receives. `payload` and `meta` are converter values (see `src/lua/convert.ts`);
 * a TypeScript handler (and the artifact tap) gets an integral Lua float (`3.0`, `10 / 2`) as a
 * plain number, never the engine's `LuaFloat` tag, which only Lua handlers need.
 *
 * ```ts
 * import { BlockConfig, type BusEvent, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const events: BusEvent[] = [];
 * const script = 'bus.emit("progress", { step = 1, of = 3 }, "p-1")'; // kind, payload, id
 * await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "p.lua"), ".")
 *     .hostHandler("progress", (event) => void events.push(event))
 *     .env({})
 *     .build(),
 * );
 * assert.deepEqual(events, [{ kind: "progress", id: "p-1", payload: { step: 1, of: 3 }, meta: {} }]);
 * ```
 */
export interface BusEvent {
  /** Event kind, as given to `bus.emit`. */
  kind: string;
  /** Event id (given or generated). */
  id: string;
  /** The payload. */
  payload: unknown;
  /** Labels attached by the emitter or the host. */
  meta: Record<string, unknown>;
}

/**
 * A TypeScript handler; its (awaited) return value is the ack that `BusHost.emit` resolves with.
 * A Lua `bus.emit` does not wait for it: it returns the event id, and the ack of its event is
 * dropped (a handler's failure is logged as a warning of the run).
 *
 * ```ts
 * import { BlockConfig, type BusHandler, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * // a terminal-result handler: the first `result` the block emits is the answer
 * let answer: unknown;
 * const onResult: BusHandler = (event) => {
 *   answer ??= event.payload;
 *   return "stored"; // the ack: what a BusHost.emit of this kind would get; the script's bus.emit gets its id
 * };
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline('bus.emit("result", { content = "42" })', "r.lua"), ".")
 *     .hostHandler("result", onResult)
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.outcome.status, "returned");
 * assert.deepEqual(answer, { content: "42" });
 * ```
 */
export type BusHandler = (event: BusEvent) => unknown;

export type { BusCore };

interface Queued {
  event: BusEvent;
  ack?: { resolve: (v: unknown) => void; reject: (e: Error) => void };
  /** The ack keeps integral floats as `LuaFloat` (an emitter that forwards it as JSON). */
  lossless?: boolean;
}

/** The engine side of one run's bus: handler tables, queue, dispatch (see the module doc). */
class BusCore {
  readonly ts = new Map<string, BusHandler>();
  tsAny: BusHandler | undefined;
  /** Sees every event the script emits, before routing (the SDK's artifacts). */
  tap: ((event: BusEvent) => void) | undefined;
  /** Served in the background from attach on (`autoServeBus`): no `bus.serve` needed. */
  autoServe = false;
  #background: AbortController | undefined;
  #lua = new Map<string, LuaFunctionRef>();
  #luaAny: LuaFunctionRef | undefined;
  #queue: Queued[] = [];
  #inflight = new Set<Promise<void>>();
  #engine: LuaEngine | undefined;
  #run: RunContext | undefined;
  #wake: (() => void) | undefined;
  #serving = false;
  #stop = false;
  #ended = false;

  /**
   * Emits an event from TypeScript; resolves with the handler's ack. A Lua handler receives it
   * while the script runs `bus.serve`. `lossless`: a Lua handler's ack keeps its integral
   * floats tagged (`LuaFloat`), for an emitter that sends it on as JSON (the mesh's replies).
   */
  emit(
    kind: string,
    payload: unknown,
    opts: { id?: string; meta?: Record<string, unknown>; lossless?: boolean } = {},
  ): Promise<unknown> {
    if (this.#ended) return Promise.reject(new Error("bus: the run has ended"));
    const event = { kind, id: opts.id ?? crypto.randomUUID(), payload, meta: opts.meta ?? {} };
    return new Promise((resolve, reject) =>
      this.#route({ event, ack: { resolve, reject }, lossless: opts.lossless })
    );
  }

  /** Number of events waiting for `bus.serve`. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Binds the host to the run it serves (once); starts the background dispatcher if auto-served. */
  attach(engine: LuaEngine, run: RunContext): void {
    if (this.#engine) throw new Error("a BusHost serves exactly one run");
    this.#engine = engine;
    this.#run = run;
    run.onCleanup(() => this.#close());
    if (this.autoServe) {
      const bg = (this.#background = new AbortController());
      this.serve(false, bg.signal).catch((e) => run.log.warn(`bus: the background dispatcher failed: ${e}`));
    }
  }

  /** `bus.emit` from Lua: queued or delivered, never blocking. Returns the id. */
  emitFromLua(kind: string, payload: unknown, id?: string): string {
    const event = { kind, id: id ?? crypto.randomUUID(), payload, meta: {} };
    this.tap?.(untagged(event) as BusEvent);
    this.#route({ event });
    return event.id;
  }

  /** Sets the Lua handler for `kind` (`undefined`: the `bus.on_any` handler), releasing the previous one. */
  setLua(kind: string | undefined, fn: LuaFunctionRef): void {
    if (kind === undefined) {
      this.#luaAny?.release();
      this.#luaAny = fn;
    } else {
      this.#lua.get(kind)?.release();
      this.#lua.set(kind, fn);
    }
    this.#wakeUp(); // the background dispatcher may now serve events that waited for a handler
  }

  /** The TypeScript handler an event goes to right now, if the routing says TypeScript. */
  #tsWinner(kind: string): BusHandler | undefined {
    if (this.#lua.has(kind)) return undefined;
    const h = this.ts.get(kind);
    if (h) return h;
    if (this.#luaAny) return undefined;
    return this.tsAny;
  }

  #route(q: Queued): void {
    const ts = this.#tsWinner(q.event.kind);
    if (ts) {
      this.#deliverTs(ts, q);
      return;
    }
    this.#queue.push(q);
    this.#wakeUp();
  }

  #deliverTs(h: BusHandler, q: Queued): void {
    const p = (async () => {
      try {
        const v = await h(untagged(q.event) as BusEvent);
        q.ack?.resolve(v);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        if (q.ack) q.ack.reject(err);
        else this.#run?.log.warn(`bus: handler for '${q.event.kind}' failed: ${err.message}`);
      }
    })();
    this.#inflight.add(p);
    p.finally(() => {
      this.#inflight.delete(p);
      this.#wakeUp();
      this.#settled();
    });
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /** `bus.stop()`: the running `bus.serve` returns after the handler in flight (the background one never). */
  stop(): boolean {
    if (this.#background) return false;
    const was = this.#serving;
    this.#stop = true;
    this.#wakeUp();
    return was;
  }

  /**
   * `bus.serve(opts)`: dispatches queued events until stopped (or idle, with `untilIdle`). Under
   * `autoServe` the background dispatcher serves: `untilIdle` waits for it to be idle, a plain
   * serve is refused.
   */
  async serve(untilIdle: boolean, signal: AbortSignal): Promise<void> {
    if (this.#background && signal !== this.#background.signal) {
      if (!untilIdle) {
        throw new Error(
          "bus.serve: the host serves this bus in the background (autoServeBus); " +
            "bus.serve({ until_idle = true }) waits for it to be idle",
        );
      }
      return this.#idle(signal);
    }
    if (this.#serving) throw new Error("bus.serve: already serving (one bus.serve at a time)");
    // The background dispatcher serves events a handler claims and leaves the others queued until
    // one registers (an event the host emits before the script's `bus.on` waits for it).
    const background = signal === this.#background?.signal;
    this.#serving = true;
    this.#stop = false;
    const onAbort = () => this.#wakeUp();
    signal.addEventListener("abort", onAbort);
    try {
      while ((background || !this.#stop) && !signal.aborted) {
        const q = this.#take(background);
        if (!q) {
          if (untilIdle && this.#inflight.size === 0) return;
          await new Promise<void>((r) => (this.#wake = r));
          continue;
        }
        await this.#dispatch(q);
      }
    } finally {
      this.#serving = false;
      this.#stop = false;
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** The next queued event to dispatch: the first one, or with `claimedOnly` the first a handler claims. */
  #take(claimedOnly: boolean): Queued | undefined {
    if (!claimedOnly) return this.#queue.shift();
    const i = this.#queue.findIndex((q) => this.#claimed(q.event.kind));
    return i < 0 ? undefined : this.#queue.splice(i, 1)[0];
  }

  #claimed(kind: string): boolean {
    return this.#lua.has(kind) || this.ts.has(kind) || this.#luaAny !== undefined || this.tsAny !== undefined;
  }

  /**
   * Resolves once no event a handler claims is queued and nothing is dispatching or in flight
   * (or when `signal` aborts).
   */
  async #idle(signal: AbortSignal): Promise<void> {
    const busy = () =>
      this.#queue.some((q) => this.#claimed(q.event.kind)) || this.#dispatching || this.#inflight.size > 0;
    while (!signal.aborted && busy()) {
      await new Promise<void>((r) => {
        this.#idleWaiters.push(r);
        signal.addEventListener("abort", () => r(), { once: true });
      });
    }
  }

  #dispatching = false;
  #idleWaiters: (() => void)[] = [];

  #settled(): void {
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  async #dispatch(q: Queued): Promise<void> {
    this.#dispatching = true;
    try {
      await this.#dispatchOne(q);
    } finally {
      this.#dispatching = false;
      this.#settled();
    }
  }

  async #dispatchOne(q: Queued): Promise<void> {
    const kind = q.event.kind;
    const lua = this.#lua.get(kind) ?? (this.ts.has(kind) ? undefined : this.#luaAny);
    if (!lua) {
      const ts = this.ts.get(kind) ?? this.tsAny;
      if (ts) return this.#deliverTs(ts, q);
      const msg = `bus: no handler for kind '${kind}' (event ${q.event.id} dropped)`;
      this.#run?.log.warn(msg);
      q.ack?.reject(new Error(msg));
      return;
    }
    try {
      const values = await this.#engine!.callLua(lua, [q.event], { floats: q.lossless ? "tagged" : "plain" });
      q.ack?.resolve(values[0]);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      this.#run?.log.warn(`bus: handler for '${kind}' failed: ${err.message}`);
      q.ack?.reject(err);
    }
  }

  async #close(): Promise<void> {
    this.#ended = true;
    this.#background?.abort();
    const graceMs = 10 * (this.#run?.procs.graceMs ?? 1000);
    if (this.#inflight.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), graceMs)));
      const r = await Promise.race([Promise.all(this.#inflight).then(() => "done" as const), timeout]);
      clearTimeout(timer);
      if (r === "timeout") {
        this.#run?.log.warn(
          `bus: ${this.#inflight.size} TypeScript handler(s) still running after ${graceMs} ms`,
        );
      }
    }
    const left = this.#queue.splice(0);
    for (const q of left) q.ack?.reject(new Error("bus: the run ended before the event was dispatched"));
    if (left.length) {
      this.#run?.log.debug(`bus: ${left.length} event(s) were never dispatched (no bus.serve)`);
    }
    for (const ref of this.#lua.values()) ref.release();
    this.#luaAny?.release();
    this.#lua.clear();
  }
}

/**
 * `v` with every `LuaFloat` (at any depth) replaced by its number; `v` itself when it holds
 * none, so a payload without integral floats is handed over as it is.
 */
function untagged(v: unknown): unknown {
  if (v instanceof LuaFloat) return v.value;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    v.forEach((x, i) => {
      const y = untagged(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    });
    return out ?? v;
  }
  const proto = typeof v === "object" && v !== null ? Object.getPrototypeOf(v) : undefined;
  if (proto === Object.prototype || proto === null) {
    const obj = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(obj)) {
      const y = untagged(x);
      if (y !== x) (out ??= { ...obj })[k] = y;
    }
    return out ?? v;
  }
  return v;
}

let coreOf: (host: BusHost) => BusCore;

/**
 * The event bus of one run, as its embedder sees it: register TypeScript handlers before the run
 * starts, emit into the script's `bus.on` handlers while it runs. One `BusHost` serves one run.
 *
 * @example Receive what a script emits
 * ```ts
 * import { BlockConfig, BusHost, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const bus = new BusHost();
 * const seen: unknown[] = [];
 * bus.on("result", (event) => {
 *   seen.push(event.payload);
 *   return "thanks"; // the acknowledgement
 * });
 * const config = BlockConfig.builder(ScriptSource.inline('bus.emit("result", { n = 1 })', "emit.lua"), ".")
 *   .bus(bus)
 *   .env({})
 *   .build();
 * await runBlock(config);
 * assert.deepEqual(seen, [{ n: 1 }]);
 * ```
 *
 * @example Ask the script from TypeScript
 * ```ts
 * import { BlockConfig, BusHost, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const script = `
 *   bus.on("ask", function(event)
 *     bus.stop() -- one question, then the script goes on
 *     return "echo: " .. event.payload.q
 *   end)
 *   bus.serve() -- events emitted before this wait in the queue`;
 * const bus = new BusHost();
 * const run = runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "echo.lua"), ".").bus(bus).env({}).build(),
 * );
 * assert.equal(await bus.emit("ask", { q: "hi" }), "echo: hi");
 * assert.equal((await run).outcome.status, "returned");
 * ```
 */
export class BusHost {
  #core = new BusCore();

  static {
    coreOf = (host) => host.#core;
  }

  /**
   * Registers (or replaces) the TypeScript handler for `kind`.
   * @param kind the event kind, as the script passes it to `bus.emit`
   * @param handler receives the event; what it returns (or resolves to) is the acknowledgement
   */
  on(kind: string, handler: BusHandler): this {
    this.#core.ts.set(kind, handler);
    return this;
  }

  /**
   * Registers (or replaces) the TypeScript fallback for kinds nobody else claims.
   * @param handler receives the event; what it returns is the acknowledgement
   */
  onAny(handler: BusHandler): this {
    this.#core.tsAny = handler;
    return this;
  }

  /**
   * Emits an event into the script; resolves with its handler's acknowledgement. A Lua handler
   * receives it while the script runs `bus.serve` (or at once under `autoServeBus`); it rejects
   * when no handler claims the kind, when the handler raises, and when the run ends first.
   * @param kind the event kind
   * @param payload a JSON value
   * @param opts the event's id (default a random UUID) and meta labels
   */
  emit(
    kind: string,
    payload: unknown,
    opts: { id?: string; meta?: Record<string, unknown> } = {},
  ): Promise<unknown> {
    return this.#core.emit(kind, payload, opts);
  }

  /** Number of events waiting for a Lua handler to be served. */
  get pending(): number {
    return this.#core.pending;
  }
}

/**
 * The engine side of `host`, for the runtime and the SDK (not part of the stable surface): the
 * artifact tap and `autoServe` are set through it before the run starts.
 */
export function busCore(host: BusHost): BusCore {
  return coreOf(host);
}

/**
 * The bus host module for `host` (an embedder's, to register TypeScript handlers on), or for a
 * fresh `BusHost` per run when none is given.
 */
export function busModule(host?: BusHost): HostModule {
  return (engine, run) => installBusHost(engine, run, host ?? new BusHost());
}

/** The standard library's bus: a fresh `BusHost` per run. */
export const installBus: HostModule = busModule();

function installBusHost(engine: LuaEngine, run: RunContext, host: BusHost): void {
  const bus = coreOf(host);
  bus.attach(engine, run);
  const kindArg = (a: import("../lua/args.ts").Args) => {
    const k = a.string(1, "kind");
    if (k === "") a.fail(1, "kind", "a non-empty string", "an empty string");
    return k;
  };
  engine.define("bus.emit", {
    floats: "tagged",
    sync: (a) => {
      const kind = kindArg(a);
      const id = a.optString(3, "id");
      return bus.emitFromLua(kind, a.at(2), id);
    },
  });
  engine.define("bus.on", {
    functions: "ref",
    sync: (a) => {
      const kind = kindArg(a);
      bus.setLua(kind, a.func(2, "fn"));
    },
  });
  engine.define("bus.on_any", {
    functions: "ref",
    sync: (a) => {
      bus.setLua(undefined, a.func(1, "fn"));
    },
  });
  engine.define("bus.serve", {
    async: async (a, cx) => {
      const opts = a.optTable(1, "opts");
      const untilIdle = optField<boolean>(a, 1, "opts", opts, "until_idle", "boolean") ?? false;
      await bus.serve(untilIdle, cx.signal);
    },
  });
  engine.define("bus.stop", { sync: () => bus.stop() });
  engine.define("bus.pending", { sync: () => bus.pending });
}
