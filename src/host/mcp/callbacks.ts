/**
 * The Lua callbacks registered for one MCP server name, and the bridge that runs them.
 *
 * Owns: the per-server table of Lua functions (`mcp.on_progress`, `mcp.set_sampling_handler`,
 * ...), keyed by server NAME rather than connection so a handler may be registered before
 * `mcp.connect` and survives a reconnect; releasing the registry slot of a replaced function.
 * The registry lives in `src/host/mcp.ts` from the start of the run and is handed to the
 * manager when the first connect loads it; this module therefore imports nothing of the SDK.
 *
 * Invariant: a callback is a `LuaFunctionRef` of the run's engine and is only ever called
 * through `LuaBridge.call`, i.e. as a task of the script's scheduler with its closure intact.
 */
import type { LuaFunctionRef } from "../../json/values.ts";

/** The kinds of callback a server can have. */
export type CallbackKind =
  | "progress"
  | "log"
  | "resource_update"
  | "resources_list_changed"
  | "tools_list_changed"
  | "prompts_list_changed"
  | "sampling"
  | "elicitation"
  | "roots";

/** Runs a Lua function as a task of the script and resolves with its results. */
export interface LuaBridge {
  call(fn: LuaFunctionRef, args: unknown[]): Promise<unknown[]>;
}

/** The callbacks of one server name. */
export class ServerCallbacks {
  #fns = new Map<CallbackKind, LuaFunctionRef>();

  get(kind: CallbackKind): LuaFunctionRef | undefined {
    return this.#fns.get(kind);
  }

  /** Sets (or, with `undefined`, clears) a callback; the replaced function's slot is freed. */
  set(kind: CallbackKind, fn: LuaFunctionRef | undefined): void {
    const old = this.#fns.get(kind);
    if (old && old !== fn) old.release();
    if (fn) this.#fns.set(kind, fn);
    else this.#fns.delete(kind);
  }

  releaseAll(): void {
    for (const fn of this.#fns.values()) fn.release();
    this.#fns.clear();
  }
}

/** The callbacks of every server name of a run (`name → ServerCallbacks`, created on first use). */
export class CallbackRegistry {
  #byName = new Map<string, ServerCallbacks>();

  /** The callbacks of `name`, created empty on first use. */
  of(name: string): ServerCallbacks {
    let cb = this.#byName.get(name);
    if (!cb) this.#byName.set(name, cb = new ServerCallbacks());
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
