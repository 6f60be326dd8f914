/**
 * The Lua callbacks registered for one MCP server name, as the client's handlers.
 *
 * Owns: the per-server table of Lua functions (`mcp.on_progress`, `mcp.set_sampling_handler`,
 * ...), keyed by server NAME rather than connection so a handler may be registered before
 * `mcp.connect` and survives a reconnect; the plain JavaScript handler the MCP client calls for
 * each (made once, when the function is set: nothing is allocated per notification); releasing
 * the registry slot of a replaced function. The registry lives in `src/host/mcp.ts` from the start
 * of the run and is handed to the client's manager when the first connect loads it; this module
 * therefore imports nothing of the SDK.
 *
 * Invariant: a callback is a `LuaFunctionRef` of the run's engine and is only ever called through
 * the engine's `callLua`, i.e. as a task of the script's scheduler with its closure intact; a call
 * the ended run can no longer make rejects with the client's `HandlerGone`.
 */
import type { LuaFunctionRef } from "../../json/values.ts";
import {
  type Handler,
  HandlerGone,
  type HandlerKind,
  type ServerHandlers,
} from "../../clients/mcp/handlers.ts";

/** The kinds of callback a server can have. */
export type CallbackKind = HandlerKind;

/** Runs a Lua function as a task of the script and resolves with its results. */
export interface LuaBridge {
  call(fn: LuaFunctionRef, args: unknown[]): Promise<unknown[]>;
  /** True when `e` says the call could not be made because the run ended. */
  ended(e: unknown): boolean;
}

/** The callbacks of one server name. */
export class ServerCallbacks implements ServerHandlers {
  #fns = new Map<CallbackKind, { ref: LuaFunctionRef; handler: Handler }>();

  constructor(private readonly lua: LuaBridge) {}

  get(kind: CallbackKind): Handler | undefined {
    return this.#fns.get(kind)?.handler;
  }

  /** Sets (or, with `undefined`, clears) a callback; the replaced function's slot is freed. */
  set(kind: CallbackKind, fn: LuaFunctionRef | undefined): void {
    const old = this.#fns.get(kind);
    if (old && old.ref !== fn) old.ref.release();
    if (!fn) {
      this.#fns.delete(kind);
      return;
    }
    const lua = this.lua;
    this.#fns.set(kind, {
      ref: fn,
      handler: (args) =>
        lua.call(fn, args).catch((e) => {
          throw lua.ended(e) ? new HandlerGone((e as Error).message) : e;
        }),
    });
  }

  releaseAll(): void {
    for (const { ref } of this.#fns.values()) ref.release();
    this.#fns.clear();
  }
}

/** The callbacks of every server name of a run (`name → ServerCallbacks`, created on first use). */
export class CallbackRegistry {
  #byName = new Map<string, ServerCallbacks>();

  constructor(private readonly lua: LuaBridge) {}

  /** The callbacks of `name`, created empty on first use. */
  of(name: string): ServerCallbacks {
    let cb = this.#byName.get(name);
    if (!cb) this.#byName.set(name, cb = new ServerCallbacks(this.lua));
    return cb;
  }

  /** The callbacks of `name`, if any were ever set. */
  peek(name: string): ServerCallbacks | undefined {
    return this.#byName.get(name);
  }

  /** Frees every callback of every name (run end). */
  releaseAll(): void {
    for (const cb of this.#byName.values()) cb.releaseAll();
    this.#byName.clear();
  }
}
