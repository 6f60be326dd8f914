/**
 * JS-side shapes of Lua values that have no plain JavaScript equivalent.
 *
 * Owns: the marker classes the value converter produces and accepts, and the Lua type names used
 * in argument errors. Shared by the converter, the JSON codec beside it, the host-function layer
 * and every stdlib module.
 *
 * Why here, at the bottom of the dependency chain rather than in `src/lua/`: the JSON codec, the
 * kernel store and the protocol clients read and write these values too, and none of them may
 * depend on the Lua host. The Lua host itself imports nothing of ours but this folder.
 *
 * Invariants: these classes carry no engine state besides what is stated; a `LuaFunctionRef` is
 * only meaningful for the engine that produced it and dies with it.
 */

/** A Lua function handed to the host. Call it through the engine (`callLua`); it runs as a task. */
export class LuaFunctionRef {
  /**
   * Wraps a registry reference.
   * @param ref registry reference inside the owning engine
   * @param release frees the registry slot; idempotent
   */
  constructor(readonly ref: number, readonly release: () => void) {}
}

/** A Lua float whose value is integral (`3.0`); keeps its floatness through JSON encoding. */
export class LuaFloat {
  /**
   * A tagged integral float.
   * @param value the float's value
   */
  constructor(readonly value: number) {}
  /** The plain number. */
  valueOf(): number {
    return this.value;
  }
}

/** Several values returned from a host function (Lua multiple results). */
export class LuaMulti {
  /**
   * Multiple results.
   * @param values the results, in order
   */
  constructor(readonly values: unknown[]) {}
}

/**
 * An error whose Lua-side value is not a string (`error({...})`), carried through JS unchanged so
 * a Lua handler further up receives the original table.
 */
export class LuaErrorValue extends Error {
  /**
   * An error carrying a non-string Lua value.
   * @param value the Lua error value (a table, usually)
   * @param message text for JS-side reports
   */
  constructor(readonly value: unknown, message?: string) {
    super(message ?? "Lua error value");
    this.name = "LuaErrorValue";
  }
}

/** The Lua type name `type()` would give for a value converted by `luaToJs`. */
export function luaTypeName(v: unknown): string {
  if (v === undefined) return "nil";
  if (v === null) return "userdata"; // std.json.null is a light userdata
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number" || typeof v === "bigint" || v instanceof LuaFloat) return "number";
  if (typeof v === "string" || v instanceof Uint8Array) return "string";
  if (v instanceof LuaFunctionRef) return "function";
  return "table";
}

/** Wraps a value whose `null`s (at any depth) become nil when pushed into Lua. */
export class NullsAsNil {
  constructor(readonly value: unknown) {}
}
