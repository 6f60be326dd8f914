/**
 * Host modules installed on first use.
 *
 * Owns `lazily(triggers, module)`: a `HostModule` that, when a run installs it, only marks the
 * Lua names the module provides (`LuaEngine.defineLazy`) and installs the module itself the first
 * time a script touches one of them — reads or writes a field of one of `tables`, iterates it
 * with `pairs`, or `require`s one of `preload`.
 *
 * Why: every block is a fresh process, and installing a module costs mostly V8 compiling its
 * code on first call; a block that never touches `std.kv` or `mcp` should not pay for them.
 * What a script can observe: nothing through ordinary use (the tables keep their identity, so a
 * reference taken early sees the module once installed). Before the first touch, `rawget` and
 * `next` see the trigger tables empty and `getmetatable` returns the trigger's metatable, whose
 * `__installed(fn)` has `fn` called right after the module installs (within the touch that
 * installs it): how a flow step taps `bus.emit` without installing the bus itself.
 * Invariant: a module is installed at most once per run, synchronously, on the thread that
 * touched it; its setup chunks must not yield (none may anyway). An installation that fails
 * raises its error at the touch that started it and again at every later touch.
 */
import type { HostModule } from "./context.ts";

/** Where a lazily installed module's surface lives. */
export interface LazyTriggers {
  /** Dotted global paths of tables the module fills (`"std.kv"`, `"mcp"`). */
  tables?: readonly string[];
  /** Module names the module answers for `require` (`"knl.host"`). */
  preload?: readonly string[];
}

/** `module`, installed the first time a script touches one of `triggers`. */
export function lazily(triggers: LazyTriggers, module: HostModule): HostModule {
  const lazy: HostModule = (engine, run) => engine.defineLazy(triggers, () => module(engine, run));
  Object.defineProperty(lazy, "name", { value: `lazily(${module.name})` });
  return lazy;
}
